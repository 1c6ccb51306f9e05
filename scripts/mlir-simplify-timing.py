#!/usr/bin/env python3
"""Times MLIR's simplifyAffineExpr on the results of affine maps, one map per line.

Usage: mlir-simplify-timing.py FILE [RUNS]

FILE holds one `affine_map<...>` per line (the simplify bench writes the suite maps
this way, unsimplified). Each map is timed two ways, RUNS times each, keeping the
median: parse the text (`ir.Attribute.parse`; MLIR folds a little while building)
and simplify every result, and simplify only (the map parsed beforehand). Simplify is
`AffineExpr.simplify_affine_expr(expr, n_dims, n_symbols)`, the C API's
`mlirAffineExprSimplify`, i.e. `mlir::simplifyAffineExpr`. Prints one line per input
line: `PARSE_AND_SIMPLIFY_NS SIMPLIFY_NS`, or `skip <reason>` when MLIR does not
parse the map (for example a product of two dimensions, which is not affine).
Both times include the cost of calling through Python (about 0.2 µs a call).

Needs jaxlib (`pip install jax`), which ships MLIR's Python bindings. Exits 3 when
they are missing so that callers can say so and go on.
"""

import sys
import time

try:
    from jaxlib.mlir import ir
except ImportError:
    print("jaxlib.mlir not importable (pip install jax)", file=sys.stderr)
    sys.exit(3)


def median(samples):
    samples.sort()
    return samples[len(samples) // 2]


def time_simplify(results, n_dims, n_syms, runs):
    simplify = ir.AffineExpr.simplify_affine_expr
    clock = time.perf_counter_ns
    samples = []
    for _ in range(runs):
        start = clock()
        for e in results:
            simplify(e, n_dims, n_syms)
        samples.append(clock() - start)
    return median(samples)


def time_parse_and_simplify(text, runs):
    simplify = ir.AffineExpr.simplify_affine_expr
    clock = time.perf_counter_ns
    samples = []
    for _ in range(runs):
        start = clock()
        amap = ir.AffineMapAttr(ir.Attribute.parse(text)).value
        n_dims, n_syms = amap.n_dims, amap.n_symbols
        for e in amap.results:
            simplify(e, n_dims, n_syms)
        samples.append(clock() - start)
    return median(samples)


def main():
    path = sys.argv[1]
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 31
    ctx = ir.Context()
    # Keep the parsed maps alive for the whole run (their context owns them).
    with ctx:
        for line in open(path, encoding="utf-8"):
            text = line.strip()
            if not text:
                continue
            try:
                attr = ir.Attribute.parse(text)
                amap = ir.AffineMapAttr(attr).value
            except Exception as e:  # MLIR reports the reason on its diagnostic handler
                print("skip", str(e).splitlines()[0] if str(e) else "parse error")
                continue
            results = list(amap.results)
            simplify_only = time_simplify(results, amap.n_dims, amap.n_symbols, runs)
            both = time_parse_and_simplify(text, runs)
            print(both, simplify_only)
            sys.stdout.flush()


if __name__ == "__main__":
    main()
