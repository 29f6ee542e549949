"""A ResNet-style CNN (stem, bottleneck blocks with batch norm and residual adds, global pool, fc),
written by hand at 64x64, run PyBuda demo style with the CNN-flavoured config lines."""

import os

import pybuda
import torch
from torch import nn


class Bottleneck(nn.Module):
    def __init__(self, cin, mid, cout, stride):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(cin, mid, 1, bias=False), nn.BatchNorm2d(mid), nn.ReLU(),
            nn.Conv2d(mid, mid, 3, stride, 1, bias=False), nn.BatchNorm2d(mid), nn.ReLU(),
            nn.Conv2d(mid, cout, 1, bias=False), nn.BatchNorm2d(cout))
        self.skip = (nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))
                     if stride != 1 or cin != cout else nn.Identity())

    def forward(self, x):
        return torch.relu(self.body(x) + self.skip(x))


class ResNetStyle(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 7, 2, 3, bias=False), nn.BatchNorm2d(16), nn.ReLU(),
                                  nn.MaxPool2d(3, 2, 1))
        self.stages = nn.Sequential(Bottleneck(16, 8, 32, 1), Bottleneck(32, 16, 64, 2))
        self.fc = nn.Linear(64, classes)

    def forward(self, x):
        x = self.stages(self.stem(x))
        return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1))


def run_resnet_style():
    compiler_cfg = pybuda.config._get_global_compiler_config()
    compiler_cfg.balancer_policy = "CNN"
    compiler_cfg.enable_conv_prestride = True
    compiler_cfg.default_df_override = pybuda._C.DataFormat.Float16_b
    compiler_cfg.default_dram_parameters = True
    os.environ["PYBUDA_FORCE_CONV_MULTI_OP_FRACTURE"] = "1"

    torch.manual_seed(0)
    model = ResNetStyle().eval()
    image = torch.rand(1, 3, 64, 64)
    output_q = pybuda.run_inference(pybuda.PyTorchModule("pt_resnet_style", model), inputs=([image],))
    output = output_q.get()
    print("Top class:", output[0].value().argmax(-1).item())
    with torch.no_grad():
        return output, model(image)


if __name__ == "__main__":
    run_resnet_style()
