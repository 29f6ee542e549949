"""Reportify in a real browser (headless Chromium, driven by Selenium): the index lists the model,
a generated module's graph opens, a click on a node opens its dialog, a hover in the placement
view highlights the op's edges. Leaves a screenshot in the test's folder."""

import shutil
import time

import pytest

from tvm_buda.reports.server import serve_in_background

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    chromium, driver_path = shutil.which("chromium"), shutil.which("chromedriver")
    assert chromium and driver_path, "Debian's chromium and chromium-driver are needed (.ci/run installs them)"
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--window-size=1400,900", f"--user-data-dir={tmp_path_factory.mktemp('chromium')}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    yield driver
    driver.quit()


def _wait(predicate, timeout=30.0):
    end = time.time() + timeout
    while time.time() < end:
        result = predicate()
        if result:
            return result
        time.sleep(0.2)
    raise AssertionError("timed out waiting for the page")


def test_index_graph_dialog_and_placement(browser, report_root, tmp_path):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    server, url = serve_in_background(report_root)
    try:
        browser.get(url + "index.html")
        rows = _wait(lambda: browser.find_elements(By.CSS_SELECTOR, "#compilations tbody tr"))
        assert rows[0].find_element(By.TAG_NAME, "td").text == "block"
        rows[0].click()
        _wait(lambda: browser.execute_script("return document.body.dataset.ready === '1'"))
        assert browser.find_element(By.ID, "title").text == "block"

        select = Select(browser.find_element(By.ID, "pass-select"))
        module_option = next(o for o in select.options if o.text.startswith("module "))
        select.select_by_visible_text(module_option.text)
        _wait(lambda: browser.execute_script(
            "return window.reportifyGraph && window.reportifyGraph.nodes('.op').length > 0"))
        time.sleep(0.5)   # layout settles
        # a real mouse click where the layernorm box is drawn on the canvas
        x, y = browser.execute_script("""
            const cy = window.reportifyGraph;
            const node = cy.nodes('.op').filter(n => n.data('raw').meta.pybuda_op === 'nn.Layernorm')[0];
            cy.center(node); cy.zoom({level: 1.2, renderedPosition: node.renderedPosition()});
            const p = node.renderedPosition();
            return [p.x, p.y];""")
        graph = browser.find_element(By.ID, "graph")
        offset_x = x - graph.size["width"] / 2
        offset_y = y - graph.size["height"] / 2
        ActionChains(browser).move_to_element_with_offset(graph, offset_x, offset_y).click().perform()
        dialog = _wait(lambda: browser.find_element(By.ID, "node-dialog").get_attribute("open") is not None
                       and browser.find_element(By.ID, "node-dialog"))
        text = dialog.text
        assert "nn.Layernorm" in text and "data format" in text and "math fidelity" in text and "device" in text
        browser.save_screenshot(str(tmp_path / "reportify_graph.png"))
        browser.find_element(By.ID, "node-close").click()

        browser.find_element(By.CSS_SELECTOR, "#tabs button[data-tab='placement']").click()
        boxes = _wait(lambda: browser.find_elements(By.CSS_SELECTOR, "#grid .op"))
        target = next(b for b in boxes if browser.execute_script(
            "const n = arguments[0].dataset.name; return window.REPORTIFY_MODEL.placement[0].edges"
            ".some(e => e[0] === n || e[1] === n)", b))
        ActionChains(browser).move_to_element(target).perform()
        _wait(lambda: browser.find_elements(By.CSS_SELECTOR, "#edges line"))
        assert not browser.find_element(By.ID, "hover").get_attribute("hidden")
        assert target.get_attribute("data-name") in browser.find_element(By.ID, "hover").text
        browser.save_screenshot(str(tmp_path / "reportify_placement.png"))
        assert (tmp_path / "reportify_graph.png").stat().st_size > 10_000
    finally:
        server.shutdown()
        server.server_close()
