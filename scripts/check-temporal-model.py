#!/usr/bin/env python3
# Session 6: a line-by-line numpy model of sweep_steps<T, S> in
# host/src/solvers/jacobi_kernels.cu (temporal blocking), checked against S
# plain sweeps on random grids and tilings; run by hand (needs numpy) after
# changing that function. It found nothing wrong when written; its two
# mutants (one lane too many stored, one row too few updated) fail.
# A line-by-line numpy model of sweep_steps<T,S> (jacobi_kernels.cu): 32
# lanes as a vector, shuffles as shifts (shfl_up at lane 0 / shfl_down at
# lane 31 return the lane's own value), against S plain sweeps.
import numpy as np, random
f = np.float32
def plain(a, S, ulo, uhi):
    a = a.copy()
    for _ in range(S):
        b = a.copy()
        for y in range(1, a.shape[0]-1):
            for x in range(1, a.shape[1]-1):
                if ulo[0] <= y < uhi[0] and ulo[1] <= x < uhi[1]:
                    b[y,x] = f(0.25) * ((a[y-1,x] + a[y+1,x]) + (a[y,x-1] + a[y,x+1]))
        a = b
    return a
def model(inp, out, lo, hi, S, ulo, uhi, warps=4):
    R, W = 8, 32 - 2*S; C = R + 2*S
    lox, hix, loy, hiy = lo[1], hi[1], lo[0], hi[0]
    nx, ny = hix-lox, hiy-loy
    chunks, segs = (nx + W - 1)//W, (ny + R - 1)//R
    lane = np.arange(32)
    for w in range(chunks*segs):
        x0 = lox + (w // segs) * W; y0 = loy + (w % segs) * R
        x = x0 - S + lane
        xload = x < hix + S
        xu = (x >= ulo[1]) & (x < uhi[1])
        c = []
        for j in range(C):
            y = y0 - S + j
            row = np.zeros(32, f)
            if y < hiy + S:
                m = xload
                row[m] = inp[y, x[m]]
            c.append(row)
        for k in range(1, S+1):
            old_prev = c[k-1].copy()
            for j in range(k, C-k):
                left = np.concatenate(([c[j][0]], c[j][:-1]))
                right = np.concatenate((c[j][1:], [c[j][-1]]))
                v = f(0.25) * ((old_prev + c[j+1]) + (left + right))
                old_prev = c[j].copy()
                y = y0 - S + j
                if ulo[0] <= y < uhi[0]:
                    c[j] = np.where(xu, v, c[j]).astype(f)
        sel = (lane >= S) & (lane < S + W) & (x < hix)
        for j in range(S, S+R):
            y = y0 - S + j
            if y < hiy:
                out[y, x[sel]] = c[j][sel]
random.seed(3)
for trial in range(60):
    S = random.choice([2,3,4]); ny, nx = random.randint(3, 40), random.randint(3, 90)
    H, Wd = ny + 2*S, nx + 2*S
    a = np.random.RandomState(trial).rand(H, Wd).astype(f)
    ulo, uhi = (S, S), (S+ny, S+nx)      # Dirichlet all round
    want = plain(a, S, ulo, uhi)
    out = np.full_like(a, -1)
    # random tiling of the interior
    ty, tx = random.randint(1, 12), random.randint(1, 70)
    for y in range(S, S+ny, ty):
        for x in range(S, S+nx, tx):
            model(a, out, (y, x), (min(y+ty, S+ny), min(x+tx, S+nx)), S, ulo, uhi)
    got = out[S:S+ny, S:S+nx]; ref = want[S:S+ny, S:S+nx]
    if not np.array_equal(got.view(np.uint32), ref.view(np.uint32)):
        print("MISMATCH", trial, S, ny, nx, ty, tx, np.argwhere(got != ref)[:5]); break
else:
    print("ok: 60 random grids and tilings, S in 2..4")
