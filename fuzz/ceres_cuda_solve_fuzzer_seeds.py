#!/usr/bin/env python3
"""Writes seed inputs of ceres_cuda_solve_fuzzer: problems in the byte format its decode() reads.

    python3 fuzz/ceres_cuda_solve_fuzzer_seeds.py fuzz/seeds/ceres_cuda_solve_fuzzer   # the hand-written seeds
    python3 fuzz/ceres_cuda_solve_fuzzer_seeds.py --bal FILE [--bal FILE ...] OUT_DIR  # cut from BAL files

The format, read front to back (bytes past the end read as 0):
  header    solver     bits 0-1 linear solver (ITERATIVE_SCHUR, SPARSE_SCHUR, DENSE_SCHUR, DENSE_QR if bad input
                       else ITERATIVE_SCHUR), bit 2 JACOBI (else SCHUR_JACOBI), bits 3-4 ordering (none, e-blocks in
                       group 0, one group, a group per block at the end), bit 5 AddParameterBlock first, bit 6 no
                       jacobi_scaling, bit 7 also solve on two threads (same bits expected)
            iterations bits 0-3 max_num_iterations - 1, bits 4-5 function_tolerance (1e-6, 1e-2, 1e-9, 0),
                       bits 6-7 gradient_tolerance (1e-10, 1e-3, 1e-8, 0)
            tolerances bits 0-1 parameter_tolerance (1e-8, 1e-3, 1e-10, 0), bits 2-3 initial_trust_region_radius
                       (1e4, 1e-2, 1e8, 1), bits 4-5 eta (0.1, 1e-3, 0.5, 1e-9), bits 6-7 max_linear_solver_iterations
                       (500, 1, 5, 50)
            flags      bit 0 edge values, bit 1 raw values, bit 2 bad input, bit 3 min_relative_decrease 0.5,
                       bit 4 max_num_consecutive_invalid_steps 1, bit 5 IDENTITY preconditioner (bad input),
                       bit 6 use_nonmonotonic_steps (bad input)
            counts     bits 0-2 e-blocks - 1, bits 3-5 f-blocks - 1
            residuals  1 + byte % 40 residual blocks
  e-block   kind       bits 0-1 size - 1, bits 2-3 manifold (none, Subset, Sphere, none), bit 4 constant, bit 5 bounds
                       (bad input), bits 6-7 the value SubsetManifold holds; then size values
  f-block   kind       bits 0-3 size - 1, bits 4-7 the value SubsetManifold holds (plus bits 6-7 of the next byte)
            more       bits 0-2 manifold (none, Quaternion, EigenQuaternion, Subset, Sphere, Pose7, Scaled, none),
                       bit 3 constant, bit 4 bounds (bad input), bit 5 16 values more (bad input); then size values
                       (Quaternion and EigenQuaternion make the block 4 values, Pose7 7)
  residual  kind       bits 0-3 size - 1, bits 4-7 cost: 10 failing, 11 a second e-block (bad input), 12 Snavely (an
                       e-block of 3 and a first f-block of 9), 13 QuaternionSnavely (e-block 3, f-blocks 4, 3, 3),
                       14 16 values more (bad input), else smooth
            e          byte % (e-blocks + 1): the e-block, or none
            shape      bits 0-1 how many f-block bytes follow, bits 2-3 loss (none, Huber, Cauchy, none), bits 4-7 the
                       loss' scale 0.25 (1 + bits); then the f-block bytes (byte % f-blocks)
            then       cost 11: the second e-block's byte; Snavely: two values (the observation); else a 16-bit
                       seed of the coefficients and a byte: bits 0-1 sine weight (0, 0.05, 0.3, 1), cost 10: bit 2
                       a NaN instead of false, bits 3-7 fail above (bits - 16) / 4
  groups    a byte per block (ordering 3): byte % 3; 0xFF leaves the block out, 0xFE also adds a block that is
            not in the problem (bad input)
  values    a byte: 0x00-0xEF the value (byte - 120) / 16; 0xF0 a double, 8 bytes little-endian (raw values);
            0xF1-0xFF NaN, inf, -inf, DBL_MAX, -DBL_MAX, 1e300, -1e300, 1e150, DBL_MIN, 4.9e-324, 1e-310, -0, 1e-8,
            1e8, -1e8 (edge values); otherwise the step value
"""
import argparse
import bz2
import math
import os
import struct

SOLVERS = {"ITERATIVE_SCHUR": 0, "SPARSE_SCHUR": 1, "DENSE_SCHUR": 2}
ORDERINGS = {"none": 0, "e_first": 1, "one_group": 2, "groups": 3}
E_MANIFOLDS = {"none": 0, "subset": 1, "sphere": 2}
F_MANIFOLDS = {"none": 0, "quaternion": 1, "eigen_quaternion": 2, "subset": 3, "sphere": 4, "pose7": 5, "scaled": 6}
LOSSES = {"none": 0, "huber": 1, "cauchy": 2}
COSTS = {"smooth": 0, "failing": 10, "two_e": 11, "snavely": 12, "quaternion_snavely": 13, "oversize": 14}
EDGE = {"nan": 0xF1, "inf": 0xF2, "-inf": 0xF3}


def value(v, raw=False):
    """A step value when v is a multiple of 1/16 in [-7.5, 7.4375], else a raw double (needs raw values)."""
    if isinstance(v, str):
        return bytes([EDGE[v]])
    step = v * 16 + 120
    if not raw and step == int(step) and 0 <= step < 0xF0:
        return bytes([int(step)])
    return bytes([0xF0]) + struct.pack("<d", v)


def encode(p):
    """p: a dict with the options, "e" and "f" (lists of blocks) and "residuals"."""
    raw = p.get("raw", False)
    out = bytearray()
    out.append(SOLVERS[p.get("solver", "ITERATIVE_SCHUR")] | (4 if p.get("jacobi") else 0) |
               ORDERINGS[p.get("ordering", "none")] << 3 | (32 if p.get("declare") else 0) |
               (64 if p.get("no_jacobi_scaling") else 0) | (128 if p.get("threads") else 0))
    out.append((p.get("iterations", 10) - 1) | p.get("function_tolerance", 0) << 4 |
               p.get("gradient_tolerance", 0) << 6)
    out.append(p.get("parameter_tolerance", 0) | p.get("radius", 0) << 2 | p.get("eta", 0) << 4 |
               p.get("max_pcg", 0) << 6)
    out.append((1 if p.get("edge") else 0) | (2 if raw else 0) | (4 if p.get("bad") else 0))
    e, f, residuals = p["e"], p["f"], p["residuals"]
    assert 1 <= len(e) <= 8 and 1 <= len(f) <= 8 and 1 <= len(residuals) <= 40
    out.append((len(e) - 1) | (len(f) - 1) << 3)
    out.append(len(residuals) - 1)
    for b in e:
        size = len(b["values"])
        out.append((size - 1) | E_MANIFOLDS[b.get("manifold", "none")] << 2 | (16 if b.get("constant") else 0) |
                   b.get("subset", 0) << 6)
        for v in b["values"]:
            out += value(v, raw)
    for b in f:
        size = len(b["values"])
        out.append((size - 1) | b.get("subset", 0) << 4)
        out.append(F_MANIFOLDS[b.get("manifold", "none")] | (8 if b.get("constant") else 0))
        for v in b["values"]:
            out += value(v, raw)
    for r in residuals:
        cost = r.get("cost", "smooth")
        out.append((r.get("size", 2) - 1) | COSTS[cost] << 4)
        out.append(r["e"] if r.get("e") is not None else len(e))
        fs = r.get("f", [])
        assert len(fs) <= 3
        out.append(len(fs) | LOSSES[r.get("loss", "none")] << 2 | r.get("loss_scale", 3) << 4)
        out += bytes(fs)
        if cost == "two_e":
            out.append(r["second_e"])
        if cost in ("snavely", "quaternion_snavely"):
            out += value(r["observed"][0], raw) + value(r["observed"][1], raw)
        else:
            out += struct.pack("<H", r.get("seed", 1))
            out.append(r.get("nonlinearity", 1) | (4 if r.get("nan") else 0) | r.get("fail_above", 16) << 3)
    for g in p.get("groups", []):
        out.append(g)
    return bytes(out)


def seeds():
    """The hand-written seeds: each a shape the library promises to solve as Ceres does, or a misuse."""
    def point(x, y, z, **kw):
        return dict(values=[x, y, z], **kw)

    points = [point(1, 0.5, -4), point(-1, 0.25, -5), point(0.5, -1, -4.5), point(-0.5, -0.5, -6)]
    cameras = [dict(values=[0.0625, -0.125, 0.0625, 0.5, -0.25, 1, 2, 0.125, -0.0625]),
               dict(values=[-0.0625, 0.125, 0, -0.5, 0.25, 0.5, 2.5, 0, 0.0625])]
    yield "points_and_cameras_iterative.bin", dict(
        e=points, f=cameras, iterations=10,
        residuals=[dict(size=2, e=j, f=[c], seed=10 * j + c, nonlinearity=1) for j in range(4) for c in range(2)] +
                  [dict(size=3, f=[0], seed=99, nonlinearity=0)])
    yield "points_and_cameras_jacobi_huber.bin", dict(
        e=points, f=cameras, jacobi=True, iterations=8,
        residuals=[dict(size=2, e=j, f=[c], seed=7 * j + c, loss="huber", loss_scale=3) for j in range(4)
                   for c in range(2)])

    # Quaternion, translation, intrinsics with k2 held, points: the split shape, with a pose prior.
    quaternion = dict(values=[1, 0, 0, 0], manifold="quaternion")
    translation = dict(values=[0.25, -0.5, 1])
    intrinsics = dict(values=[2, 0.125, 0], manifold="subset", subset=2)
    split = dict(
        solver="DENSE_SCHUR", ordering="e_first", iterations=10,
        e=points[:3],
        f=[quaternion, translation, intrinsics, dict(values=[0.5, 0.5, 0.5, 0.5], manifold="eigen_quaternion")],
        residuals=[dict(size=2, e=j, f=[0, 1, 2], seed=j + 1, nonlinearity=2) for j in range(3)] +
                  [dict(size=2, e=j, f=[3, 1, 2], seed=j + 11, nonlinearity=2, loss="cauchy") for j in range(3)] +
                  [dict(size=6, f=[0, 1], seed=50, nonlinearity=0)])
    yield "split_pose_dense_ordered.bin", split
    yield "split_pose_sparse.bin", dict(split, solver="SPARSE_SCHUR", ordering="none", jacobi=True)
    yield "split_pose_iterative_threads.bin", dict(split, solver="ITERATIVE_SCHUR", ordering="none", threads=True)

    # Homogeneous points on a sphere, an inverse depth (one value), a constant point, a 7-value pose on a
    # product manifold, a user's manifold, residuals of 1 to 16 values and a prior on a point alone.
    mixed = dict(
        solver="ITERATIVE_SCHUR", ordering="groups", declare=True, iterations=12,
        e=[dict(values=[1, 0.5, -4, 1], manifold="sphere"), dict(values=[0.25]), point(0.5, -1, -4.5, constant=True),
           point(-0.5, -0.5, -6)],
        f=[dict(values=[1, 0, 0, 0, 0.25, -0.5, 1], manifold="pose7"),
           dict(values=[2, 0.125, 0.0625], manifold="scaled"), dict(values=[0.5] * 16)],
        residuals=[dict(size=2, e=0, f=[0, 1], seed=3), dict(size=1, e=1, f=[0, 1], seed=4),
                   dict(size=3, e=2, f=[0, 2], seed=5), dict(size=16, e=3, f=[0, 1, 2], seed=6, nonlinearity=2),
                   dict(size=4, e=3, f=[], seed=7), dict(size=7, e=None, f=[0], seed=8, loss="huber"),
                   dict(size=5, e=0, f=[2], seed=9)],
        groups=[0, 0, 1, 0, 1, 1, 2])
    yield "manifolds_and_sizes_ordered.bin", mixed
    yield "manifolds_and_sizes_dense.bin", dict(mixed, solver="DENSE_SCHUR", ordering="none", declare=False)

    # A cost function that fails above a threshold, and a non-finite residual.
    yield "failing_cost.bin", dict(
        e=points[:2], f=cameras[:1], iterations=6,
        residuals=[dict(size=2, e=0, f=[0], cost="failing", fail_above=20), dict(size=2, e=1, f=[0], seed=2),
                   dict(size=2, e=1, f=[0], cost="failing", nan=True, fail_above=18)])
    # Misuses: a residual on two e-blocks with them in group 0 (Ceres refuses it), and a NaN value.
    yield "two_e_blocks_in_group_zero.bin", dict(
        bad=True, ordering="e_first", e=points[:2], f=cameras[:1],
        residuals=[dict(size=2, e=0, f=[0], seed=1), dict(size=2, e=1, f=[0], seed=2),
                   dict(size=3, e=0, f=[], cost="two_e", second_e=1, seed=3)])
    yield "nan_in_a_point.bin", dict(
        edge=True, e=[point(1, "nan", -4), point(-1, 0.25, -5)], f=cameras[:1],
        residuals=[dict(size=2, e=0, f=[0], seed=1), dict(size=2, e=1, f=[0], seed=2)])


def read_bal(path):
    opener = bz2.open if path.endswith(".bz2") else open
    with opener(path, "rt") as text:
        tokens = text.read().split()
    cameras, points, observations = (int(t) for t in tokens[:3])
    at = 3
    obs = []
    for _ in range(observations):
        obs.append((int(tokens[at]), int(tokens[at + 1]), float(tokens[at + 2]), float(tokens[at + 3])))
        at += 4
    camera_values = [float(t) for t in tokens[at:at + 9 * cameras]]
    at += 9 * cameras
    point_values = [float(t) for t in tokens[at:at + 3 * points]]
    return obs, camera_values, point_values


def bal_seeds(path):
    """The first observations of a BAL file whose cameras and points fit (8 of each, 40 observations),
    renumbered: the BAL shape (SnavelyReprojectionError on 9-value cameras and 3-value points), the
    library's fast path, and the same with SPARSE_SCHUR and Huber on the general engine."""
    obs, camera_values, point_values = read_bal(path)
    camera_of, point_of, kept = {}, {}, []
    for c, j, x, y in obs:
        if len(kept) == 40:
            break
        if (c not in camera_of and len(camera_of) == 8) or (j not in point_of and len(point_of) == 8):
            continue
        camera_of.setdefault(c, len(camera_of))
        point_of.setdefault(j, len(point_of))
        kept.append((camera_of[c], point_of[j], x, y))
    cameras = [dict(values=camera_values[9 * c:9 * c + 9]) for c in sorted(camera_of, key=camera_of.get)]
    points = [dict(values=point_values[3 * j:3 * j + 3]) for j in sorted(point_of, key=point_of.get)]
    residuals = [dict(cost="snavely", e=j, f=[c], observed=(x, y)) for c, j, x, y in kept]
    base = os.path.basename(path).split(".")[0]
    problem = dict(raw=True, e=points, f=cameras, residuals=residuals, iterations=10)
    yield base + "_fast_path.bin", problem
    yield base + "_sparse_huber.bin", dict(problem, solver="SPARSE_SCHUR", ordering="e_first",
                                           residuals=[dict(r, loss="huber", loss_scale=3) for r in residuals])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bal", action="append", default=[], help="a BAL file (.txt or .txt.bz2) to cut seeds from")
    parser.add_argument("out_dir")
    args = parser.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    made = [s for path in args.bal for s in bal_seeds(path)] if args.bal else list(seeds())
    for name, problem in made:
        with open(os.path.join(args.out_dir, name), "wb") as out:
            out.write(encode(problem))


if __name__ == "__main__":
    main()
