"""ResNet-50, MobileNetV1 and MobileNetV2 as plain torch modules (torchvision is not installable
here). Layer shapes follow the papers; weights are never loaded, only shapes matter."""

from __future__ import annotations

import torch
from torch import nn


def _conv_bn(cin: int, cout: int, kernel: int, stride: int = 1, groups: int = 1, act=nn.ReLU) -> nn.Sequential:
    layers = [nn.Conv2d(cin, cout, kernel, stride, kernel // 2, groups=groups, bias=False), nn.BatchNorm2d(cout)]
    return nn.Sequential(*layers, act()) if act is not None else nn.Sequential(*layers)


# ---- ResNet-50 (He et al. 2015, v1.5: stride in the 3x3 conv) ---------------------------------
class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, cin: int, width: int, stride: int):
        super().__init__()
        cout = width * self.expansion
        self.body = nn.Sequential(
            _conv_bn(cin, width, 1), _conv_bn(width, width, 3, stride), _conv_bn(width, cout, 1, act=None))
        self.shortcut = _conv_bn(cin, cout, 1, stride, act=None) if stride != 1 or cin != cout else nn.Identity()
        self.relu = nn.ReLU()

    def forward(self, x):
        return self.relu(self.body(x) + self.shortcut(x))


class ResNet50(nn.Module):
    STAGES = ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2))   # (width, blocks, first stride)

    def __init__(self, classes: int = 1000):
        super().__init__()
        layers = [_conv_bn(3, 64, 7, 2), nn.MaxPool2d(3, 2, 1)]
        cin = 64
        for width, blocks, stride in self.STAGES:
            for i in range(blocks):
                layers.append(Bottleneck(cin, width, stride if i == 0 else 1))
                cin = width * Bottleneck.expansion
        self.features = nn.Sequential(*layers)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x):
        x = nn.functional.adaptive_avg_pool2d(self.features(x), 1)
        return self.fc(torch.flatten(x, 1))


# ---- MobileNetV1 (Howard et al. 2017) --------------------------------------------------------
class MobileNetV1(nn.Module):
    # (output channels, stride) of each depthwise-separable block
    BLOCKS = ((64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2),
              (512, 1), (512, 1), (512, 1), (512, 1), (512, 1), (1024, 2), (1024, 1))

    def __init__(self, classes: int = 1000):
        super().__init__()
        layers = [_conv_bn(3, 32, 3, 2)]
        cin = 32
        for cout, stride in self.BLOCKS:
            layers += [_conv_bn(cin, cin, 3, stride, groups=cin), _conv_bn(cin, cout, 1)]
            cin = cout
        self.features = nn.Sequential(*layers)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x):
        x = nn.functional.adaptive_avg_pool2d(self.features(x), 1)
        return self.fc(torch.flatten(x, 1))


# ---- MobileNetV2 (Sandler et al. 2018) -------------------------------------------------------
class InvertedResidual(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int, expand: int):
        super().__init__()
        hidden = cin * expand
        layers = [_conv_bn(cin, hidden, 1, act=nn.ReLU6)] if expand != 1 else []
        layers += [_conv_bn(hidden, hidden, 3, stride, groups=hidden, act=nn.ReLU6),
                   _conv_bn(hidden, cout, 1, act=None)]
        self.body = nn.Sequential(*layers)
        self.residual = stride == 1 and cin == cout

    def forward(self, x):
        return x + self.body(x) if self.residual else self.body(x)


class MobileNetV2(nn.Module):
    SETTINGS = ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1))          # (expand, channels, repeats, stride)

    def __init__(self, classes: int = 1000):
        super().__init__()
        layers = [_conv_bn(3, 32, 3, 2, act=nn.ReLU6)]
        cin = 32
        for expand, cout, repeats, stride in self.SETTINGS:
            for i in range(repeats):
                layers.append(InvertedResidual(cin, cout, stride if i == 0 else 1, expand))
                cin = cout
        layers.append(_conv_bn(cin, 1280, 1, act=nn.ReLU6))
        self.features = nn.Sequential(*layers)
        self.fc = nn.Linear(1280, classes)

    def forward(self, x):
        x = nn.functional.adaptive_avg_pool2d(self.features(x), 1)
        return self.fc(torch.flatten(x, 1))
