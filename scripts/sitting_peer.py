#!/usr/bin/env python3
"""The peer's side of `scripts/sitting`: lbmpy's D2Q9 kernels, built and validated once, then
timed on request, so that each of our runs can be bracketed by the peer's timings seconds
before and after it.

Run under lbmpy's Python (`scripts/sitting` starts it). It imports lbmpy's D2Q9 benchmark
script (`lbmpy_bench.py`, given with --peer-script; not part of this repository) and uses its own code for everything it times: its kernel
generation (`build_kernel`, AVX-512 where the CPU has it), its initialisation, its lattice
(`Lattice.run`: the fused stream-collide kernel plus the periodic ghost-layer sync, which is
what the peer script times) and its validation (shear-wave decay against the viscosity, mass
conservation, in place against pull). Protocol on standard input/output: after `ready`, each
line `<pull|aa> <f64|f32>` is answered by one line, the MLUPS of one timing of at least
`--min-time` seconds on the 4096² lattice, after four untimed steps.
"""

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DTYPES = {"f64": "float64", "f32": "float32"}


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--peer-script", required=True, help="lbmpy_bench.py (not part of this repository)")
    p.add_argument("--size", type=int, default=4096, help="edge of the square lattice")
    p.add_argument("--min-time", type=float, default=1.0, help="seconds per timing")
    p.add_argument("--precisions", nargs="+", default=["f64", "f32"], choices=sorted(DTYPES))
    return p.parse_args()


def main():
    a = parse_args()
    script = Path(a.peer_script)
    # The peer script parses its own arguments when imported (and sets OMP_NUM_THREADS from
    # them before loading any kernel): its defaults, 2 threads.
    sys.argv = [str(script), "--threads", "2"]
    sys.path.insert(0, str(script.parent))
    import lbmpy_bench as peer
    from lbmpy.advanced_streaming.utility import Timestep

    isas = ["avx512", "avx", "none"]
    lattices = {}
    for prec in a.precisions:
        dtype = DTYPES[prec]
        pull, lc, isa, _ = peer.build_kernel("D2Q9", dtype, "pull", Timestep.BOTH, isas)
        even, _, _, _ = peer.build_kernel("D2Q9", dtype, "aa", Timestep.EVEN, isas)
        odd, _, _, _ = peer.build_kernel("D2Q9", dtype, "aa", Timestep.ODD, isas)
        g = peer.max_speed(lc.stencil)
        ref = None
        for pattern, kernels in (("pull", [pull]), ("aa", [even, odd])):
            setter = peer.build_setter(kernels[0].method, dtype, pattern, g)
            ok, info, state = peer.validate("D2Q9", lc, kernels, setter, dtype, pattern, ref_state=ref)
            if not ok:
                sys.exit(f"sitting_peer: lbmpy's D2Q9 {pattern} {dtype} kernel failed its validation: {info}")
            ref = state if pattern == "pull" else ref
            lat = peer.Lattice("D2Q9", lc, kernels, setter, a.size, dtype, pattern)
            lat.run(4)
            # As the peer script calibrates: double the steps until a run lasts 0.3 s.
            k = 2
            while True:
                t0 = time.perf_counter()
                lat.run(k)
                dt = time.perf_counter() - t0
                if dt > 0.3:
                    break
                k *= 2
            steps = max(2, int(a.min_time / (dt / k)) + 1)
            lattices[(pattern, prec)] = (lat, steps + steps % 2)
        print(f"sitting_peer: D2Q9 {a.size}² {dtype} pull and AA built ({isa}) and validated",
              file=sys.stderr, flush=True)
    print("ready", flush=True)
    sites = a.size * a.size
    for line in sys.stdin:
        pattern, prec = line.split()
        lat, steps = lattices[(pattern, prec)]
        # Untimed steps first: the lattice has been idle while the other program ran.
        lat.run(4)
        t0 = time.perf_counter()
        lat.run(steps)
        print(f"{sites * steps / (time.perf_counter() - t0) / 1e6:.1f}", flush=True)


if __name__ == "__main__":
    main()
