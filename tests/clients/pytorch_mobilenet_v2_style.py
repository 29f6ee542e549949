"""A MobileNetV2-style CNN (inverted residuals: 1x1 expand, 3x3 depthwise, 1x1 project, ReLU6),
written by hand at 64x64, run PyBuda demo style through a TTDevice with an explicit arch."""

import pybuda
import torch
from pybuda._C.backend_api import BackendDevice
from torch import nn


def conv_bn(cin, cout, k, stride, groups=1, act=True):
    layers = [nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=False), nn.BatchNorm2d(cout)]
    return nn.Sequential(*layers, nn.ReLU6()) if act else nn.Sequential(*layers)


class InvertedResidual(nn.Module):
    def __init__(self, cin, cout, stride, expand):
        super().__init__()
        mid = cin * expand
        self.block = nn.Sequential(conv_bn(cin, mid, 1, 1), conv_bn(mid, mid, 3, stride, groups=mid),
                                   conv_bn(mid, cout, 1, 1, act=False))
        self.residual = stride == 1 and cin == cout

    def forward(self, x):
        y = self.block(x)
        return x + y if self.residual else y


class MobileNetV2Style(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.features = nn.Sequential(conv_bn(3, 16, 3, 2), InvertedResidual(16, 16, 1, 2),
                                      InvertedResidual(16, 24, 2, 4), InvertedResidual(24, 24, 1, 4),
                                      conv_bn(24, 64, 1, 1))
        self.classifier = nn.Linear(64, classes)

    def forward(self, x):
        return self.classifier(self.features(x).mean(dim=(2, 3)))


def run_mobilenet_v2_style():
    available_devices = pybuda.detect_available_devices()
    compiler_cfg = pybuda.config._get_global_compiler_config()
    compiler_cfg.balancer_policy = "Ribbon"
    compiler_cfg.default_df_override = pybuda._C.DataFormat.Float16_b
    if available_devices[0] == BackendDevice.Grayskull:
        compiler_cfg.enable_auto_transposing_placement = True
    else:
        compiler_cfg.graph_solver_self_cut_type = "FastCut"

    torch.manual_seed(0)
    model = MobileNetV2Style().eval()
    tt0 = pybuda.TTDevice("tt0", arch=available_devices[0],
                          module=pybuda.PyTorchModule("pt_mobilenet_v2_style", model))
    image = torch.rand(1, 3, 64, 64)
    tt0.push_to_inputs(pybuda.Tensor.create_from_torch(image))
    output_q = pybuda.run_inference()
    output = output_q.get()
    with torch.no_grad():
        return output, model(image)


if __name__ == "__main__":
    run_mobilenet_v2_style()
