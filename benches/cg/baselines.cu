// The scalar steps of the CG baseline in device pointer mode (one thread
// each), so that no iteration waits for the host. `s` is the baseline's
// scalar vector; the slot numbers are `baselines.rs`'s `slot` constants.
// Compiled by NVRTC; no toolkit headers.

#define RHO 0
#define RHO_NEW 1
#define PAP 2
#define ALPHA 3
#define NEG_ALPHA 4
#define BETA 5
#define FAIL_ITER 7
#define FAIL_VALUE 8

// alpha = rho / pAp. A pAp that is not positive and finite is recorded
// (first one only, with its 1-based iteration) and alpha becomes 0, so the
// iterate stops moving; the host checks FAIL_ITER after the run.
extern "C" __global__ void cg_alpha(double* s, unsigned iteration) {
    double pap = s[PAP];
    double a = s[RHO] / pap;
    // (v - v) == 0 is false exactly for NaN and ±inf.
    bool ok = pap > 0.0 && (a - a) == 0.0;
    if (!ok) {
        if (s[FAIL_ITER] == 0.0) {
            s[FAIL_ITER] = (double)iteration + 1.0;
            s[FAIL_VALUE] = pap;
        }
        a = 0.0;
    }
    s[ALPHA] = a;
    s[NEG_ALPHA] = -a;
}

// beta = rho_new / rho; rho = rho_new.
extern "C" __global__ void cg_beta(double* s) {
    double rn = s[RHO_NEW];
    s[BETA] = rn / s[RHO];
    s[RHO] = rn;
}
