#!/usr/bin/env python3
"""The Taichi peer of springsim's GPU engine: the same mass-spring model, stepped by Taichi kernels.

The model comes from springsim itself (`springsim bench ... --export-model model.json`): the particles,
masses, pins, springs (endpoints, rest length, stiffness, damping), gravity, drag, wind, the step h and
the substeps per frame of springsim's run. Two workloads, as in springsim's GPU engine:

* ``symplectic``: one symplectic Euler substep, v' = v + h M^-1 f(x, v), x' = x + h v'. The force is a
  per-particle gather over the CSR incidence lists (springsim's order), one Taichi kernel (one task) per
  substep reading one state and writing the other (ping-pong). ``--scatter`` runs the other natural
  Taichi form instead: a loop over springs with atomic adds into a force field, then the integration.
* ``implicit``: one step of Baraff & Witkin's linearized implicit Euler, (M - h df/dv - h^2 df/dx) dv =
  h (f0 + h df/dx v0), solved matrix-free by Jacobi-preconditioned CG with a fixed budget of iterations
  (10) and no read-back: the spring blocks h kd nn^T + h^2 K_s (K_s with the transverse term clamped at
  zero) per incidence entry, A p as a gather, the dot products as Taichi reductions into 0-d fields,
  pinned rows filtered to zero; v' = v0 + dv, x' = x0 + h v'. The same system as springsim's
  shaders/implicit.wgsl + shaders/pcg.wgsl.

Timing: `ti.sync()` before and after `--reps` repetitions, `--rounds` times; the record is the median
per repetition. Prints one JSON object per workload on stdout.
"""
import argparse
import json
import statistics
import sys
import time

import numpy as np
import taichi as ti


def load(path):
    with open(path) as f:
        m = json.load(f)
    if m.get("unsupported"):
        sys.exit(f"taichi_cloth: the model has what the peer does not implement: {', '.join(m['unsupported'])}")
    if m["alpha"] != 0.0:
        sys.exit(f"taichi_cloth: Rayleigh damping (alpha = {m['alpha']}) is not implemented by the peer")
    return m


def csr(n, a, b):
    """springsim's CSR incidence (src/model/csr.rs): per particle, its springs in increasing order."""
    s = np.arange(len(a), dtype=np.int64)
    owner = np.concatenate([a, b])
    other = np.concatenate([b, a])
    spring = np.concatenate([s, s])
    order = np.lexsort((spring, owner))
    offsets = np.zeros(n + 1, dtype=np.int32)
    np.add.at(offsets, owner + 1, 1)
    return np.cumsum(offsets).astype(np.int32), other[order].astype(np.int32), spring[order]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model", help="the JSON from `springsim bench --export-model`")
    ap.add_argument("--workload", choices=["symplectic", "implicit"], required=True)
    ap.add_argument("--cg-iterations", type=int, default=10)
    ap.add_argument("--reps", type=int, default=100, help="repetitions between two ti.sync()")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--scatter", action="store_true", help="symplectic: springs scatter with atomic adds")
    ap.add_argument("--arch", default="vulkan")
    args = ap.parse_args()

    m = load(args.model)
    ti.init(arch=getattr(ti, args.arch), default_fp=ti.f32, offline_cache=True, log_level=ti.WARN)
    n = m["particles"]
    a = np.array(m["spring_a"], dtype=np.int64)
    b = np.array(m["spring_b"], dtype=np.int64)
    offsets, other, spring = csr(n, a, b)
    e = len(other)

    x = [ti.Vector.field(3, ti.f32, n) for _ in range(2)]
    v = [ti.Vector.field(3, ti.f32, n) for _ in range(2)]
    inv_m = ti.field(ti.f32, n)
    off = ti.field(ti.i32, n + 1)
    nbr_j = ti.field(ti.i32, e)
    nbr_rest = ti.field(ti.f32, e)
    nbr_k = ti.field(ti.f32, e)
    nbr_kd = ti.field(ti.f32, e)

    pos = np.array(m["positions"], dtype=np.float32).reshape(n, 3)
    vel = np.array(m["velocities"], dtype=np.float32).reshape(n, 3)
    masses = np.array(m["masses"], dtype=np.float64)
    w = (1.0 / masses).astype(np.float32)
    w[np.array(m["pinned"], dtype=np.int64)] = 0.0
    x[0].from_numpy(pos)
    v[0].from_numpy(vel)
    inv_m.from_numpy(w)
    off.from_numpy(offsets)
    nbr_j.from_numpy(other)
    nbr_rest.from_numpy(np.array(m["spring_rest"], dtype=np.float32)[spring])
    nbr_k.from_numpy(np.array(m["spring_k"], dtype=np.float32)[spring])
    nbr_kd.from_numpy(np.array(m["spring_kd"], dtype=np.float32)[spring])

    h = float(m["h"])
    g = ti.Vector(m["gravity"])
    wind = ti.Vector(m["wind"])
    d0 = float(m["drag"])
    eps = 1e-9

    @ti.func
    def accel(xs: ti.template(), vs: ti.template(), i):
        acc = ti.Vector([0.0, 0.0, 0.0])
        wi = inv_m[i]
        if wi != 0.0:
            xi = xs[i]
            vi = vs[i]
            f = ti.Vector([0.0, 0.0, 0.0])
            for q in range(off[i], off[i + 1]):
                j = nbr_j[q]
                d = xi - xs[j]
                l = d.norm()
                if l > eps:
                    u = d / l
                    fs = nbr_k[q] * (l - nbr_rest[q])
                    if nbr_kd[q] != 0.0:
                        fs += nbr_kd[q] * u.dot(vi - vs[j])
                    f -= u * fs
            acc = f * wi + g - (vi - wind) * d0
        return acc

    @ti.kernel
    def symplectic(xs: ti.template(), vs: ti.template(), xd: ti.template(), vd: ti.template()):
        for i in range(n):
            vn = vs[i] + accel(xs, vs, i) * h
            xd[i] = xs[i] + vn * h
            vd[i] = vn

    # the scatter form: springs add their force into f with atomics, then every particle integrates
    sa = ti.field(ti.i32, len(a))
    sb = ti.field(ti.i32, len(a))
    s_rest = ti.field(ti.f32, len(a))
    s_k = ti.field(ti.f32, len(a))
    s_kd = ti.field(ti.f32, len(a))
    force = ti.Vector.field(3, ti.f32, n)
    if args.scatter:
        sa.from_numpy(a.astype(np.int32))
        sb.from_numpy(b.astype(np.int32))
        s_rest.from_numpy(np.array(m["spring_rest"], dtype=np.float32))
        s_k.from_numpy(np.array(m["spring_k"], dtype=np.float32))
        s_kd.from_numpy(np.array(m["spring_kd"], dtype=np.float32))

    @ti.kernel
    def symplectic_scatter(xs: ti.template(), vs: ti.template()):
        for i in range(n):
            force[i] = ti.Vector([0.0, 0.0, 0.0])
        for s in range(len(a)):
            p, q = sa[s], sb[s]
            d = xs[p] - xs[q]
            l = d.norm()
            if l > eps:
                u = d / l
                fs = s_k[s] * (l - s_rest[s]) + s_kd[s] * u.dot(vs[p] - vs[q])
                force[p] -= u * fs
                force[q] += u * fs
        for i in range(n):
            wi = inv_m[i]
            if wi != 0.0:
                vn = vs[i] + (force[i] * wi + g - (vs[i] - wind) * d0) * h
                vs[i] = vn
                xs[i] += vn * h

    # implicit Euler: blocks per incidence entry (diagonal and off-diagonal of the symmetric 3x3)
    blk_d = ti.Vector.field(3, ti.f32, e)
    blk_o = ti.Vector.field(3, ti.f32, e)
    cg_r = ti.Vector.field(3, ti.f32, n)
    cg_z = ti.Vector.field(3, ti.f32, n)
    cg_p = ti.Vector.field(3, ti.f32, n)
    cg_ap = ti.Vector.field(3, ti.f32, n)
    cg_x = ti.Vector.field(3, ti.f32, n)
    cg_dinv = ti.Vector.field(3, ti.f32, n)
    rz = ti.field(ti.f32, ())
    rz_new = ti.field(ti.f32, ())
    pap = ti.field(ti.f32, ())

    @ti.func
    def sym_apply(dg, od, u):
        # dg = (xx, yy, zz), od = (xy, xz, yz)
        return ti.Vector([
            dg[0] * u[0] + od[0] * u[1] + od[1] * u[2],
            od[0] * u[0] + dg[1] * u[1] + od[2] * u[2],
            od[1] * u[0] + od[2] * u[1] + dg[2] * u[2],
        ])

    md_factor = 1.0 + h * d0

    @ti.kernel
    def implicit_prepare(xs: ti.template(), vs: ti.template()):
        for i in range(n):
            wi = inv_m[i]
            b_i = ti.Vector([0.0, 0.0, 0.0])
            dinv = ti.Vector([0.0, 0.0, 0.0])
            if wi != 0.0:
                xi = xs[i]
                vi = vs[i]
                mi = 1.0 / wi
                jxv = ti.Vector([0.0, 0.0, 0.0])
                diag = ti.Vector([md_factor * mi, md_factor * mi, md_factor * mi])
                for q in range(off[i], off[i + 1]):
                    j = nbr_j[q]
                    d = xi - xs[j]
                    l = d.norm()
                    bd = ti.Vector([0.0, 0.0, 0.0])
                    bo = ti.Vector([0.0, 0.0, 0.0])
                    if l > eps:
                        u = d / l
                        c = ti.max(1.0 - nbr_rest[q] / l, 0.0)
                        k = nbr_k[q]
                        o0 = u * u
                        o1 = ti.Vector([u[0] * u[1], u[0] * u[2], u[1] * u[2]])
                        k0 = k * (o0 + c * (1.0 - o0))
                        k1 = k * (o1 - c * o1)
                        jxv -= sym_apply(k0, k1, vi - vs[j])
                        bd = h * h * k0 + h * nbr_kd[q] * o0
                        bo = h * h * k1 + h * nbr_kd[q] * o1
                        diag += bd
                    blk_d[q] = bd
                    blk_o[q] = bo
                f0 = accel(xs, vs, i) * mi
                b_i = (f0 + jxv * h) * h
                dinv = 1.0 / diag
            cg_r[i] = b_i
            cg_dinv[i] = dinv

    @ti.kernel
    def cg_begin():
        rz[None] = 0.0
        for i in range(n):
            z = cg_r[i] * cg_dinv[i]
            cg_x[i] = ti.Vector([0.0, 0.0, 0.0])
            cg_z[i] = z
            cg_p[i] = z
            rz[None] += cg_r[i].dot(z)

    @ti.kernel
    def cg_matvec():
        pap[None] = 0.0
        for i in range(n):
            y = ti.Vector([0.0, 0.0, 0.0])
            wi = inv_m[i]
            if wi != 0.0:
                pi = cg_p[i]
                y = pi * (md_factor / wi)
                for q in range(off[i], off[i + 1]):
                    y += sym_apply(blk_d[q], blk_o[q], pi - cg_p[nbr_j[q]])
            cg_ap[i] = y
            pap[None] += cg_p[i].dot(y)

    @ti.kernel
    def cg_update():
        rz_new[None] = 0.0
        alpha = 0.0
        if pap[None] > 0.0:
            alpha = rz[None] / pap[None]
        for i in range(n):
            cg_x[i] += alpha * cg_p[i]
            r = cg_r[i] - alpha * cg_ap[i]
            z = r * cg_dinv[i]
            cg_r[i] = r
            cg_z[i] = z
            rz_new[None] += r.dot(z)

    @ti.kernel
    def cg_direction():
        beta = 0.0
        if rz[None] > 0.0:
            beta = rz_new[None] / rz[None]
        for i in range(n):
            cg_p[i] = cg_z[i] + beta * cg_p[i]
        rz[None] = rz_new[None]

    @ti.kernel
    def implicit_integrate(xs: ti.template(), vs: ti.template()):
        for i in range(n):
            if inv_m[i] != 0.0:
                vn = vs[i] + cg_x[i]
                vs[i] = vn
                xs[i] += vn * h
            else:
                vs[i] = ti.Vector([0.0, 0.0, 0.0])

    parity = [0]

    def step_symplectic():
        if args.scatter:
            symplectic_scatter(x[0], v[0])
            return
        p = parity[0]
        symplectic(x[p], v[p], x[1 - p], v[1 - p])
        parity[0] = 1 - p

    def step_implicit():
        implicit_prepare(x[0], v[0])
        cg_begin()
        for _ in range(args.cg_iterations):
            cg_matvec()
            cg_update()
            cg_direction()
        implicit_integrate(x[0], v[0])

    step = step_symplectic if args.workload == "symplectic" else step_implicit
    for _ in range(args.warmup):
        step()
    ti.sync()
    per_rep = []
    for _ in range(args.rounds):
        t = time.perf_counter()
        for _ in range(args.reps):
            step()
        ti.sync()
        per_rep.append((time.perf_counter() - t) * 1e3 / args.reps)
    p = parity[0]
    xs = x[p].to_numpy()
    record = {
        "peer": "taichi",
        "taichi": ".".join(map(str, ti.__version__)),
        "arch": str(ti.lang.impl.current_cfg().arch),
        "workload": args.workload,
        "form": "scatter" if args.scatter else "gather",
        "scene": m["scene"],
        "particles": n,
        "springs": len(a),
        "h": h,
        "cg_iterations": args.cg_iterations if args.workload == "implicit" else 0,
        "reps": args.reps,
        "rounds": args.rounds,
        "ms_median": statistics.median(per_rep),
        "ms_min": min(per_rep),
        "ms_max": max(per_rep),
        "finite": bool(np.isfinite(xs).all()),
        "min_y": float(xs[:, 1].min()),
    }
    print(json.dumps(record), flush=True)


if __name__ == "__main__":
    main()
