"""Games by name or reference: ``get_game("highway")``, ``get_game("mypkg.mygame:MyGame")`` (a
:class:`~agents.game.Game` subclass imported on first use, so ``train.py --game mypkg.mygame:MyGame``
needs no registration), and the ``"module:attr"`` references games use to name code imported on
first use. A name added with :func:`register_game` exists only in its process: workers and
checkpoints get :func:`game_key`, the shipped name or the class's reference.
"""

from __future__ import annotations

import importlib
import inspect

from agents.game import Game, check_contract
from highway_env.cli_args import first_line, json_object

#: game name -> "module:Class" (imported on first use, so agents/ has no game code of its own)
GAMES: dict[str, str] = {"highway": "highway_env.az_game:HighwayGame",
                         "blackpath": "highway_env.blackpath.az_game:BlackPathGame",
                         "jumping": "highway_env.jumping.az_game:JumpingGame"}
#: the names every process knows without a registration (stored as names in checkpoints)
SHIPPED = frozenset(GAMES)
_SHIPPED_REFS = frozenset(GAMES.values())
#: (reference, options) of the user's games that passed check_contract in this process
_CHECKED: set[tuple[str, str]] = set()


def resolve(ref: str):
    """The object a ``"package.module:attr[.attr...]"`` reference names, importing the module;
    ValueError (one line, naming ``ref``) if it has no colon, the module does not import or the
    attribute is missing."""
    module, colon, attr = ref.partition(":") if isinstance(ref, str) else ("", "", "")
    if not (colon and module and attr):
        raise ValueError(f"{ref!r} is not a reference of the form 'package.module:Name'")
    try:
        obj = importlib.import_module(module)
    except Exception as e:  # not found, or the module's own code failing (an import in it, a raise, a SyntaxError)
        raise ValueError(f"{ref!r}: cannot import module {module!r} ({type(e).__name__}: {e})") from None
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise ValueError(f"{ref!r}: {getattr(obj, '__name__', module)!r} has no attribute {part!r}") from None
    return obj


def class_ref(cls: type) -> str:
    """``"module:QualName"``, the reference that imports ``cls``."""
    return f"{cls.__module__}:{cls.__qualname__}"


def _game_class_of(ref: str) -> type[Game]:
    cls = resolve(ref)
    if not (isinstance(cls, type) and issubclass(cls, Game)):
        raise ValueError(f"{ref!r} is not an agents.game.Game subclass (it is {cls!r})")
    if inspect.isabstract(cls):
        missing = sorted(getattr(cls, "__abstractmethods__", ()))
        raise ValueError(f"{ref!r} is an abstract Game: it lacks {', '.join(missing)}")
    return cls


def register_game(name: str, ref_or_class, *, replace: bool = False) -> None:
    """Make ``get_game(name)`` (and ``train.py --game name`` in this process) build the game that
    ``ref_or_class`` names: a ``"module:Class"`` reference or the class itself, which must be
    importable by its reference (not defined in ``__main__`` or inside a function), since workers
    and checkpoints rebuild it from there. ValueError on a duplicate name (unless ``replace``), a
    shipped name, or anything that is not a concrete Game subclass."""
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"a game name must be an identifier such as 'tictactoe', got {name!r}")
    if name in SHIPPED:
        raise ValueError(f"game {name!r} is a shipped game and cannot be replaced")
    if name in GAMES and not replace:
        raise ValueError(f"game {name!r} is already registered (as {GAMES[name]!r}); pass replace=True")
    if isinstance(ref_or_class, type):
        ref = class_ref(ref_or_class)
        if ref_or_class.__module__ == "__main__" or "<locals>" in ref:
            raise ValueError(f"game class {ref!r} cannot be imported by another process (workers, a later "
                             "az:PATH): define it in an importable module")
        if resolve(ref) is not ref_or_class:
            raise ValueError(f"game class {ref_or_class!r} is not what its reference {ref!r} imports")
    elif isinstance(ref_or_class, str):
        ref = ref_or_class
        if ref.startswith("__main__:"):
            raise ValueError(f"game {ref!r} cannot be imported by another process (a later az:PATH): "
                             "define it in an importable module")
    else:
        raise ValueError(f"register_game({name!r}, ...) takes a 'module:Class' reference or a Game "
                         f"subclass, got {ref_or_class!r}")
    _game_class_of(ref)
    GAMES[name] = ref


def game_class(game: str) -> type[Game]:
    """The Game subclass a registered name or a ``"module:Class"`` reference names; ValueError
    naming ``game`` otherwise."""
    if isinstance(game, str) and game in GAMES:
        return _game_class_of(GAMES[game])
    if not isinstance(game, str) or ":" not in game:
        hint = f" (a reference has a colon: '{game}:GameClass')" if isinstance(game, str) and "." in game else ""
        raise ValueError(f"unknown game {game!r}; known: {sorted(GAMES)}, or a reference "
                         f"'package.module:GameClass'{hint}")
    return _game_class_of(game)


def game_key(game: str) -> str:
    """What names ``game`` in every process: a shipped name as is, a registered name or a reference
    as the class's ``"module:Class"`` (the shipped name if it is a shipped class). ValueError as
    :func:`game_class`."""
    ref = class_ref(game_class(game))
    return next((name for name in sorted(SHIPPED) if GAMES[name] == ref), ref)


def same_game(key: str, game: Game) -> bool:
    """Whether the game ``key`` names (a name or reference, as a checkpoint stores it) is ``game``'s
    class."""
    try:
        return game_class(key) is type(game)
    except ValueError:
        return key == class_ref(type(game))


def get_game(name: str = "highway", config: dict | None = None) -> Game:
    """The game ``name`` (a registered name or ``"module:Class"``), built with the keyword options
    ``config`` (``Game.config()``); ValueError naming the game and the error when its constructor
    raises, and a GameError (a ValueError) when a game that is not shipped breaks the protocol in
    two random games (:func:`agents.game.check_contract`)."""
    cls = game_class(name)
    try:
        game = cls(**(config or {}))
    except Exception as e:
        raise ValueError(f"game {name!r} cannot be built with options {config or {}}: "
                         f"{type(e).__name__}: {first_line(e)}") from e
    key = (class_ref(cls), repr(sorted((config or {}).items())))
    if key[0] not in _SHIPPED_REFS and key not in _CHECKED:  # a user's game: checked now, not deep in a search
        check_contract(game)
        _CHECKED.add(key)  # once a process: validation, the trainer and the evaluation each build it
    return game


def game_options(name: str, text: str) -> dict:
    """The keyword options of game ``name`` from a JSON object (``--game-config '{"rows": 5}'``;
    ``''`` = the defaults), checked by building the game once: ValueError names an unknown key (and
    lists the known ones) or the value the game rejects."""
    cls = game_class(name)
    text = (text or "").strip()
    if not text:
        return {}
    opts = json_object(text, "game config", """'{"rows": 5}'""")
    known = [k for k in inspect.signature(cls.__init__).parameters if k != "self"]
    unknown = sorted(set(opts) - set(known))
    if unknown:
        raise ValueError(f"game {name!r} has no option(s) {unknown} (in game config {text!r}); "
                         f"known: {known}")
    try:
        cls(**opts)
    except (TypeError, ValueError) as e:
        raise ValueError(f"game {name!r} rejects game config {text!r}: {e}") from None
    except Exception as e:  # a user's game refusing an option in its own way
        raise ValueError(f"game {name!r} rejects game config {text!r}: {type(e).__name__}: {first_line(e)}") from e
    return opts
