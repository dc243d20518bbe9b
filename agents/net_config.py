"""The network's configuration, apart from the network (PyTorch), so that train.py's options and a
checkpoint's configs read where torch is not installed."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from agents.mcts import ConfigError


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
        return self

    def to_dict(self) -> dict:
        return {**asdict(self), "obs_shape": list(self.obs_shape)}

    @classmethod
    def from_dict(cls, d: dict) -> "NetConfig":
        d = {**d, "obs_shape": tuple(d.get("obs_shape", ()))}
        unknown = set(d) - set(cls.__dataclass_fields__)
        if unknown:
            raise ConfigError(f"unknown net config keys {sorted(unknown)}")
        return cls(**d).validate()
