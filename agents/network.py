"""Policy/value networks (PyTorch): an MLP and a small ResNet, built from a plain-dict config.

Input: observations from the side to move, (N, *obs_shape) (channels last for the ResNet). Output:
``(logits, value, score)``: policy logits over the *view-frame* actions, the value in [-1, 1] and
an auxiliary score (e.g. the scaled margin), both for the side to move. The MLP is the CPU default:
self-play on 2 cores is bound by network calls and it evaluates ~10x more positions per second
than a 4x64 ResNet (bench/bench_agents.py).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from agents.net_config import NetConfig
from agents.mcts import ConfigError  # noqa: F401  (public here too: defined where torch is not needed)


class _Heads(nn.Module):
    """Policy, value and score heads on a feature vector."""

    def __init__(self, width: int, num_actions: int):
        super().__init__()
        self.policy = nn.Linear(width, num_actions)
        self.value = nn.Sequential(nn.Linear(width, 64), nn.ReLU(), nn.Linear(64, 2))  # value, score

    def forward(self, h):
        vs = self.value(h)
        return self.policy(h), torch.tanh(vs[:, 0]), vs[:, 1]


class MLPNet(nn.Module):
    def __init__(self, cfg: NetConfig):
        super().__init__()
        n_in = math.prod(cfg.obs_shape)
        layers, width = [], n_in
        for _ in range(cfg.layers):
            layers += [nn.Linear(width, cfg.hidden), nn.ReLU()]
            width = cfg.hidden
        self.body = nn.Sequential(*layers)
        self.heads = _Heads(width, cfg.num_actions)

    def forward(self, obs):
        return self.heads(self.body(obs.flatten(1).float()))


class _Block(nn.Module):
    def __init__(self, ch: int):
        super().__init__()
        self.c1 = nn.Conv2d(ch, ch, 3, padding=1, bias=False)
        self.b1 = nn.BatchNorm2d(ch)
        self.c2 = nn.Conv2d(ch, ch, 3, padding=1, bias=False)
        self.b2 = nn.BatchNorm2d(ch)

    def forward(self, x):
        y = F.relu(self.b1(self.c1(x)))
        return F.relu(x + self.b2(self.c2(y)))


class ResNet(nn.Module):
    def __init__(self, cfg: NetConfig):
        super().__init__()
        h, w, c = cfg.obs_shape
        self.stem = nn.Sequential(nn.Conv2d(c, cfg.channels, 3, padding=1, bias=False),
                                  nn.BatchNorm2d(cfg.channels), nn.ReLU())
        self.blocks = nn.Sequential(*[_Block(cfg.channels) for _ in range(cfg.blocks)])
        self.heads = _Heads(cfg.channels * h * w, cfg.num_actions)

    def forward(self, obs):
        x = obs.float().permute(0, 3, 1, 2)  # channels last -> NCHW
        return self.heads(self.blocks(self.stem(x)).flatten(1))


def build_network(cfg: NetConfig) -> nn.Module:
    cfg.validate()
    return MLPNet(cfg) if cfg.kind == "mlp" else ResNet(cfg)


def masked_log_softmax(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """log-softmax over the legal entries; illegal ones get a large negative number (not -inf, so
    0 * logp stays 0 in a cross-entropy)."""
    return torch.log_softmax(logits.masked_fill(~mask, -1e9), dim=-1)
