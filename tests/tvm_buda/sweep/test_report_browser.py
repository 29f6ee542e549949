"""The sweep report in headless Chromium: every row shown, a click on a header sorts, the filter
box and the status menu filter rows and plots alike, one dot per measured job in each plot."""

import pytest

from tests.tvm_buda.reports.test_browser import _wait, browser  # noqa: F401  (the shared Chromium fixture)
from tvm_buda.reports.server import serve_in_background
from tvm_buda.sweep.report import write_report

from .test_sweep_plan import ROWS

pytestmark = pytest.mark.browser


def _column(browser, index):  # noqa: F811
    from selenium.webdriver.common.by import By

    return [row.find_elements(By.TAG_NAME, "td")[index].text
            for row in browser.find_elements(By.CSS_SELECTOR, "#results tbody tr")]


def test_sort_filter_and_plots(browser, tmp_path):  # noqa: F811
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    write_report(tmp_path / "report", ROWS, total=3)
    server, url = serve_in_background(tmp_path / "report")
    try:
        browser.get(url + "index.html")
        _wait(lambda: browser.execute_script("return document.body.dataset.ready === '1'"))
        headers = [th.text for th in browser.find_elements(By.CSS_SELECTOR, "#results th")]
        model, pcc = headers.index("model"), headers.index("pcc")
        assert _column(browser, model) == ["mlp", "mlp", "raises.py"]
        dots = "#plot-accuracy circle[fill-opacity], #plot-throughput circle[fill-opacity]"
        assert len(browser.find_elements(By.CSS_SELECTOR, dots)) == 4      # 2 jobs measured, 2 plots

        browser.find_elements(By.CSS_SELECTOR, "#results th")[pcc].click()   # numbers sort high to low
        assert _column(browser, pcc) == ["0.99970", "0.95000", ""]
        browser.find_elements(By.CSS_SELECTOR, "#results th")[pcc].click()
        assert _column(browser, pcc) == ["0.95000", "0.99970", ""]

        browser.find_element(By.ID, "filter").send_keys("HiFi4")
        assert sorted(_column(browser, model)) == ["mlp", "raises.py"]
        assert len(browser.find_elements(By.CSS_SELECTOR, dots)) == 2      # the plots follow the filter
        Select(browser.find_element(By.ID, "status-filter")).select_by_value("ERROR")
        assert _column(browser, model) == ["raises.py"]
        assert browser.find_element(By.ID, "shown").text == "1 of 3 rows"
        assert "3 of 3 jobs finished" in browser.find_element(By.ID, "subtitle").text
        browser.save_screenshot(str(tmp_path / "sweep_report.png"))
    finally:
        server.shutdown()
        server.server_close()
