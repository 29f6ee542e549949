"""A U-Net-style network (two down levels, a bottleneck, transposed-conv upsampling with skip
concatenations, a 1x1 head), written by hand at 64x64, run PyBuda demo style."""

import pybuda
import torch
from torch import nn


def double_conv(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU(),
                         nn.Conv2d(cout, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU())


class UNetStyle(nn.Module):
    def __init__(self, classes=2):
        super().__init__()
        self.down1, self.down2 = double_conv(3, 8), double_conv(8, 16)
        self.bottom = double_conv(16, 32)
        self.up2, self.dec2 = nn.ConvTranspose2d(32, 16, 2, stride=2), double_conv(32, 16)
        self.up1, self.dec1 = nn.ConvTranspose2d(16, 8, 2, stride=2), double_conv(16, 8)
        self.head = nn.Conv2d(8, classes, 1)

    def forward(self, x):
        d1 = self.down1(x)
        d2 = self.down2(nn.functional.max_pool2d(d1, 2))
        b = self.bottom(nn.functional.max_pool2d(d2, 2))
        u2 = self.dec2(torch.cat([self.up2(b), d2], dim=1))
        u1 = self.dec1(torch.cat([self.up1(u2), d1], dim=1))
        return self.head(u1)


def run_unet_block():
    compiler_cfg = pybuda.config._get_global_compiler_config()
    compiler_cfg.balancer_policy = "Ribbon"
    compiler_cfg.default_df_override = pybuda._C.DataFormat.Float16_b
    compiler_cfg.enable_auto_fusing = False
    compiler_cfg.max_pool_add_sub_surround = True
    compiler_cfg.max_pool_add_sub_surround_value = 5.0

    torch.manual_seed(0)
    model = UNetStyle().eval()
    image = torch.rand(1, 3, 64, 64)
    output_q = pybuda.run_inference(pybuda.PyTorchModule("pt_unet_style", model), inputs=[(image,)])
    output = output_q.get()
    with torch.no_grad():
        return output, model(image)


if __name__ == "__main__":
    run_unet_block()
