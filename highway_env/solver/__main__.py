"""Command line for the exact solver.

    python -m highway_env.solver solve "16,0,0,0,0,0,0,0,0,0,0,0,0,0,0,1" --json [--margin] [--moves]
    python -m highway_env.solver solve --file positions.txt --json
    python -m highway_env.solver prove [--workers N] [--ray-address ADDR] [--threshold T] [--out PATH]
    python -m highway_env.solver first-moves [--workers N] [--out PATH]
    python -m highway_env.solver store verify [--sample N] [--path P]

Exit status: 0 on success, 2 on bad input (a clear message on stderr).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys

from highway_env.core import NUM_ACTIONS, NUMBERS, PATH_LEN, HighwayError, parse_board
from highway_env.cli_args import (OneLineErrorParser, Terminated, non_negative_int, path_arg, positive_float,
                                  positive_int, sigterm_as_interrupt, tt_bits_arg, number as number_type)
from highway_env.ray_tasks import add_ray_task_flags, ray_task_settings
from highway_env.run_lock import RunInUseError, lock_output
from highway_env.shipped import check_output, note_missing_input

DEFAULT_FIRST_MOVES_PATH = os.path.join("results", "first_moves.json")


def default_certificate_path(threshold: int, first_move: int | None) -> str:
    """Where ``prove`` writes when no --out is given: named by its arguments, never a shipped file."""
    name = "certificate" + (f"-t{threshold}" if threshold != 1 else "") + (
        f"-move{first_move}" if first_move is not None else "")
    return os.path.join("results", "proof", name + ".json")


_action = number_type(int, 0, NUM_ACTIONS - 1)
# a path's sum is at most 7 x 16, so no margin lies beyond; far larger ones would overflow in the workers
_threshold = number_type(int, -PATH_LEN * NUMBERS, PATH_LEN * NUMBERS)


def _add_pool_args(p, tt_default: int, out_help: str) -> None:
    """The arguments ``prove`` and ``first-moves`` share: workers, Ray, table size, output, progress."""
    p.add_argument("--workers", type=positive_int, default=os.cpu_count() or 1,
                   help="worker processes (default: all cores, here %(default)s)")
    p.add_argument("--ray-address", metavar="ADDR",
                   help="run the sub-problems as tasks on this Ray cluster ('auto' for the local one) "
                        "instead of local processes; needs the 'ray' extra. --workers is then the CPUs of the "
                        "Ray instance 'local' starts; a cluster left without any node that can run a unit for "
                        "--ray-node-wait seconds stops the run with an error")
    add_ray_task_flags(p)
    p.add_argument("--tt-bits", type=tt_bits_arg, default=tt_default, metavar="B",
                   help="transposition table per worker: 2**B two-entry buckets (default %(default)s, ~350 MB)")
    p.add_argument("--out", metavar="PATH", help=out_help + "; one process at a time writes it, a second is refused")
    p.add_argument("--force", action="store_true", help="allow the default output to replace a shipped result")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineErrorParser(
        prog="python -m highway_env.solver",
        description="Exact solver for Highway. Values are from A's side: +1 A wins, 0 draw, -1 B wins; "
                    "the margin is minB - minA under perfect play.")
    sub = parser.add_subparsers(dest="command", required=True)

    solve = sub.add_parser("solve", help="solve positions given as 16 comma-separated numbers (0 = empty)",
                           description="Solve one or more positions. Each position is 16 comma-separated "
                                       "numbers in row-major order, 0 for an empty cell; the side to move "
                                       "follows from the number of filled cells.")
    solve.add_argument("positions", nargs="*", help="positions to solve, in order")
    solve.add_argument("--file", metavar="PATH",
                       help="read positions from PATH, one per line (blank lines and lines starting "
                            "with # are skipped); '-' reads standard input")
    solve.add_argument("--json", action="store_true",
                       help="print one JSON object per position: value, margin, best, nodes, seconds")
    solve.add_argument("--margin", action="store_true",
                       help="also compute the exact margin (about 10x the work of the value alone)")
    solve.add_argument("--moves", action="store_true",
                       help="also give the value (and with --margin the margin) of every legal move")
    solve.add_argument("--time-limit", type=positive_float, metavar="S",
                       help="give up on a position after S seconds and report it as unknown "
                            "(value null, status 'unknown')")
    solve.add_argument("--node-limit", type=positive_int, metavar="N",
                       help="give up on a position after about N nodes and report it as unknown")
    solve.add_argument("--tt-bits", type=tt_bits_arg, default=22, metavar="B",
                       help="transposition table of 2**B two-entry buckets (default 22, ~180 MB)")

    prove = sub.add_parser("prove", help="prove from scratch that A wins from the empty board",
                           description="Solve the empty board from scratch on all cores: for each "
                                       "candidate first move of A, every reply of B modulo symmetry is a "
                                       "sub-problem solved by a worker; writes a JSON certificate.")
    _add_pool_args(prove, 23, "where to write the certificate (default: results/proof/certificate[-tT][-moveA].json "
                              "from the arguments; the shipped proof/ files are written only when named here)")
    prove.add_argument("--first-move", type=_action, metavar="ACTION",
                       help="only try this first move (action = (number-1)*16 + cell, 0..255), e.g. to re-check "
                            "a certificate")
    prove.add_argument("--threshold", type=_threshold, default=1, metavar="T",
                       help="prove that A can force margin minB - minA >= T, in -112..112 (default 1: A wins); the "
                            "largest T that can be proven is the value of the game")
    prove.add_argument("--unit-nodes", type=non_negative_int, default=400_000, metavar="N",
                       help="largest unit of work: a sub-problem needing more nodes is split into A's "
                            "answers and B's replies after them, so many workers share it (default "
                            "%(default)s, about 1%% of the proof; 0: never split)")
    prove.add_argument("--estimates", metavar="PATH", type=path_arg("'none' to split only by searching"),
                       help="a certificate of an earlier run with the same threshold: sub-problems it "
                            "measured above --unit-nodes are split at once instead of after a search "
                            "that runs out (default: the shipped proof/ certificate of that threshold if "
                            "any; 'none' to split only by searching)")

    first = sub.add_parser("first-moves", help="the value of each of A's 96 distinct first moves",
                           description="For each of A's first moves modulo symmetry: A wins if every "
                                       "B reply is won, a draw if every reply still leaves A margin >= 0, "
                                       "else B wins. Long (hours on 2 cores); resumable: results are "
                                       "rewritten atomically after each move and skipped on a rerun.")
    _add_pool_args(first, 23, "results file, also the resume point (default: results/first_moves.json; the "
                              "shipped proof/first_moves.json is written only when named here)")
    first.add_argument("--certificate", default="proof/certificate.json", metavar="PATH",
                       type=path_arg("'none' to prove that move again"),
                       help="take the proven first move's value from this proof certificate instead of "
                            "proving it again (default: %(default)s; skipped if the file is missing; "
                            "'none': prove it again)")

    store = sub.add_parser("store", help="check the position store shared by the perfect players",
                           description="Commands on the solved-position store (SQLite) that the perfect players "
                                       "share: entries carry the solver version and a checksum.")
    store_sub = store.add_subparsers(dest="store_command", required=True)
    verify = store_sub.add_parser("verify", help="re-solve a random sample of stored entries",
                                  description="Re-solve a random sample of the store's entries and report "
                                              "mismatches; also counts rows ignored for another solver "
                                              "version or a wrong checksum. Exit 1 on any mismatch or "
                                              "wrong checksum.")
    verify.add_argument("--sample", type=positive_int, default=200, metavar="N",
                        help="entries to re-solve (default %(default)s)")
    verify.add_argument("--path", metavar="P", type=path_arg(), help="store file (default: $HIGHWAY_ENV_CACHE or "
                                                    "~/.cache/highway_env/solved.sqlite)")
    verify.add_argument("--seed", type=int, default=0, help="seed of the sample (default %(default)s)")
    verify.add_argument("--time-limit", type=positive_float, default=60.0, metavar="S",
                        help="seconds per entry; slower ones are counted as unknown (default %(default)s)")
    return parser


def _read_positions(args) -> list[tuple[str, str]]:
    """(where, text) of every position: where names the argument or the --file line, for errors."""
    texts = [(f"position {i + 1}", text) for i, text in enumerate(args.positions)]
    if args.file is not None:  # --file '' too: an empty name is no file, said so, not ignored
        name = "<stdin>" if args.file == "-" else args.file
        try:
            if args.file == "-":
                data = sys.stdin.buffer.read()
            else:
                with open(args.file, "rb") as f:
                    data = f.read()
        except OSError as exc:
            raise HighwayError(f"cannot read --file {args.file!r}: {exc.strerror}") from None
        for number, raw in enumerate(data.split(b"\n"), start=1):
            try:
                line = raw.decode("utf-8-sig" if number == 1 else "utf-8").strip()
            except UnicodeDecodeError as exc:
                raise HighwayError(f"{name} line {number}: not UTF-8 text (byte {raw[exc.start]:#04x} at "
                                   f"column {exc.start + 1}); save the file as UTF-8") from None
            if line and not line.startswith("#"):
                texts.append((f"{name} line {number}", line))
    if not texts:
        raise HighwayError("no position given: pass positions or --file PATH")
    return texts


def _short(text: str, limit: int = 60) -> str:
    """A bad input echoed in a one-line error, cut so that a 5,000-digit cell does not flood it."""
    return repr(text) if len(text) <= limit else repr(text[:limit]) + f"... ({len(text)} characters)"


def _human(board, result) -> str:
    from highway_env.core import action_str

    verdict = {1: "A wins", 0: "draw", -1: "B wins", None: "unknown (limit reached)"}[result.value]
    lines = [board.to_grid(), f"value: {verdict}"]
    if result.margin is not None:
        lines.append(f"margin (minB - minA): {result.margin}")
    if result.best is not None:
        lines.append(f"best move: {action_str(result.best)} (action {result.best})")
    if result.moves is not None:
        lines.append("moves: " + ", ".join(
            f"{action_str(m.action)}={m.value}" + (f"/{m.margin}" if m.margin is not None else "")
            for m in result.moves))
    lines.append(f"nodes: {result.nodes}  seconds: {result.seconds:.3f}")
    return "\n".join(lines)


def cmd_solve(args) -> int:
    # Parse everything first: a bad line anywhere is reported before any work is done.
    boards = []
    for where, text in _read_positions(args):
        if len(text) > 200:  # 16 numbers of two digits and commas: anything longer is not a board
            raise HighwayError(f"{where} ({_short(text)}): too long for 16 comma-separated numbers")
        try:
            boards.append(parse_board(text))
        except (HighwayError, ValueError) as exc:
            raise HighwayError(f"{where} ({_short(text)}): {exc}") from None
    from highway_env.solver.solver import Solver

    solver = Solver(tt_bits=args.tt_bits)
    for k, board in enumerate(boards):
        result = solver.solve(board, margin=args.margin, moves=args.moves, time_limit=args.time_limit,
                              node_limit=args.node_limit)
        if args.json:
            print(json.dumps(result.to_dict()), flush=True)
        else:
            if k:
                print()
            print(_human(board, result), flush=True)
    return 0


#: what ``prove`` and ``first-moves`` keep when they stop before the end, and how to go on
_KEPT = {"first-moves": "results so far are kept: run the same command again to resume",
         "prove": "nothing written: a proof is written when complete"}


def _ray_settings(args) -> dict:
    """ProofConfig's Ray options from the command line (HighwayError for one given without --ray-address)."""
    env, node_wait = ray_task_settings(args)
    return {"ray_runtime_env": env, "ray_no_cpu_timeout": node_wait, "ray_kept": _KEPT[args.command]}


def cmd_prove(args) -> int:
    from highway_env.solver.prove import NotProvenError, ProofConfig, prove, write_certificate

    # None: the default path; '' is refused by the flag's type (an unset shell variable, not a default)
    out = default_certificate_path(args.threshold, args.first_move) if args.out is None else args.out
    check_output(out, allowed=args.out is not None or args.force)  # before hours of work, not after
    config = ProofConfig(workers=args.workers, tt_bits=args.tt_bits, ray_address=args.ray_address,
                         **_ray_settings(args), first_move=args.first_move, unit_nodes=args.unit_nodes,
                         estimates=load_estimates(args.estimates, args.threshold))
    # one process per --out (the lock file is closed, so let go, on leaving): a second proof to it
    # would overwrite this one's certificate
    with lock_output(out) or contextlib.nullcontext():
        try:
            certificate = prove(config, progress=not args.no_progress, threshold=args.threshold)
        except NotProvenError as exc:  # every candidate first move was refuted: an answer, not a crash
            print(f"not proven: {exc}", file=sys.stderr)
            return 1
        write_certificate(certificate, out)
    fm = certificate["first_move"]
    claim = "A wins" if args.threshold == 1 else f"A forces margin >= {args.threshold}"
    print(f"{claim}: first move {fm['number']} at cell {fm['cell']}; all {certificate['replies_distinct']} "
          f"distinct B replies ({certificate['replies_total']} in all) answered; {certificate['nodes']:,} nodes, "
          f"{certificate['wall_seconds']} s wall on {certificate['workers']} workers; certificate: {out}")
    units = certificate["units"]
    print(f"{units['count']} units ({units['split_replies']} replies split), the largest {units['largest_nodes']:,} "
          f"nodes = {100 * units['largest_share']:.1f}% of the proof; {units['unit_seconds']} s of unit time. "
          f"Predicted wall on 64 workers: {units['predicted_wall_seconds_64_workers']} s (longest-first schedule "
          f"of the measured unit times; the longest chain of units that must run in turn is "
          f"{units['critical_path_seconds']} s)")
    return 0


SHIPPED_CERTIFICATES = {1: os.path.join("proof", "certificate.json"), 2: os.path.join("proof", "certificate_margin2.json")}


def load_estimates(path: str | None, threshold: int) -> dict:
    """Sub-problem sizes measured by an earlier certificate of this threshold (see --estimates)."""
    from highway_env.solver.proof_units import estimates_from

    if path == "none":
        return {}
    if path is None:
        path = SHIPPED_CERTIFICATES.get(threshold)
        if path is None or not os.path.exists(path):
            return {}
    try:
        with open(path, encoding="utf-8") as f:
            certificate = json.load(f)
        if int(certificate.get("threshold", 1)) != threshold:
            raise ValueError(f"its threshold is {certificate.get('threshold', 1)}, not {threshold}")
        return estimates_from(certificate)
    except (OSError, ValueError, KeyError, TypeError, HighwayError) as exc:
        raise HighwayError(f"--estimates {path!r}: not a usable certificate ({type(exc).__name__}: {exc})") from None


def cmd_first_moves(args) -> int:
    from highway_env.solver.prove import ProofConfig, first_move_values

    out = DEFAULT_FIRST_MOVES_PATH if args.out is None else args.out  # '' refused as given, as in prove
    check_output(out, allowed=args.out is not None or args.force)
    config = ProofConfig(workers=args.workers, tt_bits=args.tt_bits, ray_address=args.ray_address,
                         **_ray_settings(args))
    certificate = None
    path = None if args.certificate == "none" else args.certificate
    note_missing_input(path, "--certificate", "the winning first move is solved again")
    if path is not None and os.path.exists(path):
        try:
            with open(path, encoding="utf-8") as f:
                certificate = json.load(f)
            certificate["first_move"]["action"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise HighwayError(f"--certificate {path!r} is not a proof certificate "
                               f"({type(exc).__name__}: {exc}); pass another or --certificate none") from None
    with lock_output(out) or contextlib.nullcontext():  # two on one --out would each rewrite it without the other's moves
        result = first_move_values(config, out, progress=not args.no_progress, certificate=certificate)
    counts = {v: sum(1 for m in result["moves"] if m["value"] == v) for v in (1, 0, -1)}
    print(f"{len(result['moves'])} first moves solved ({'complete' if result['complete'] else 'partial'}): "
          f"{counts[1]} win for A, {counts[0]} draw, {counts[-1]} win for B; results: {out}")
    return 0


def cmd_store(args) -> int:
    from highway_env.solver.store import PositionStore, default_store_path
    from highway_env.solver.store_verify import verify_store

    path = str(default_store_path()) if args.path is None else args.path
    with PositionStore(path, readonly=True) as store:
        report = verify_store(store, args.sample, seed=args.seed, time_limit=args.time_limit)
    for m in report["mismatches"]:
        print(f"mismatch: {m['key']} stored {m['stored']} but the solver refutes {m['refuted']}")
    print(f"{path}: {report['rows']} rows; {report['checked']} re-solved, {len(report['mismatches'])} mismatches, "
          f"{report['unknown']} over the time limit; ignored: {report['checksum']} with a wrong checksum, "
          f"{report['version']} from another solver version")
    return 1 if report["mismatches"] or report["checksum"] else 0


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    command = {"solve": cmd_solve, "prove": cmd_prove, "first-moves": cmd_first_moves,
               "store": cmd_store}[args.command]
    try:
        with sigterm_as_interrupt():
            return command(args)
    except (HighwayError, RunInUseError) as exc:
        if not getattr(exc, "reported", False):  # this machine's Ray node lost: said when it was seen
            print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:
        name = "SIGTERM" if isinstance(exc, Terminated) else "Ctrl-C"
        kept = f" ({_KEPT[args.command]})" if args.command in _KEPT else ""
        print(f"interrupted by {name}; workers stopped{kept}", file=sys.stderr)
        return 143 if isinstance(exc, Terminated) else 130  # the shell's 128 + signal number


if __name__ == "__main__":
    sys.exit(main())
