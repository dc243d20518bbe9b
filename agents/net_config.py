"""The network's configuration, apart from the network (PyTorch), so that train.py's options and a
checkpoint's configs read where torch is not installed."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

from agents.mcts import ConfigError

# Weights beyond this are no network to train here: 2**28 float32 parameters take 1 GiB, 4 GiB with
# the gradients and AdamW's two moments. Far larger sizes (--layers 10**20) would be built layer by
# layer until the machine's memory runs out.
MAX_NET_PARAMS = 2 ** 28


@dataclass
class NetConfig:
    """The network's kind and size, validated (``agents.network.build_network`` builds it)."""

    kind: str = "mlp"  # "mlp" or "resnet"
    hidden: int = 256  # MLP width
    layers: int = 3  # MLP hidden layers
    channels: int = 64  # ResNet channels
    blocks: int = 4  # ResNet residual blocks
    obs_shape: tuple = field(default_factory=tuple)  # filled from the game
    num_actions: int = 0  # filled from the game

    def validate(self) -> "NetConfig":
        if self.kind not in ("mlp", "resnet"):
            raise ConfigError(f"net kind must be 'mlp' or 'resnet', got {self.kind!r}")
        for name in ("hidden", "layers", "channels", "blocks", "num_actions"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise ConfigError(f"net {name} must be a positive integer, got {v!r}")
        if not self.obs_shape or any(int(d) < 1 for d in self.obs_shape):
            raise ConfigError(f"net obs_shape must be a non-empty shape, got {self.obs_shape!r}")
        if self.kind == "resnet" and len(self.obs_shape) != 3:
            raise ConfigError(f"the resnet needs an (H, W, C) obs_shape, got {self.obs_shape!r}")
        if self.parameter_count() > MAX_NET_PARAMS:
            width, depth = ("hidden", "layers") if self.kind == "mlp" else ("channels", "blocks")
            raise ConfigError(f"the {self.kind} network with {width} {getattr(self, width)} and {depth} "
                              f"{getattr(self, depth)} has about {self.parameter_count():.3g} weights, more than "
                              f"2**28 (1 GiB): give a smaller {width} or {depth}")
        return self

    def parameter_count(self) -> int:
        """The weights of the linear and convolution layers (what grows with the sizes; the heads'
        small fixed parts and the biases left out)."""
        a = self.num_actions
        if self.kind == "mlp":
            h = self.hidden
            return math.prod(self.obs_shape) * h + (self.layers - 1) * h * h + h * a
        h, w, c = self.obs_shape
        ch = self.channels
        return 9 * c * ch + self.blocks * 18 * ch * ch + ch * h * w * a

    def to_dict(self) -> dict:
        return {**asdict(self), "obs_shape": list(self.obs_shape)}

    @classmethod
    def from_dict(cls, d: dict) -> "NetConfig":
        d = {**d, "obs_shape": tuple(d.get("obs_shape", ()))}
        unknown = set(d) - set(cls.__dataclass_fields__)
        if unknown:
            raise ConfigError(f"unknown net config keys {sorted(unknown)}")
        return cls(**d).validate()
