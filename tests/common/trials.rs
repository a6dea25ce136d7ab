//! Trials that need no GPU: plain ones, ones that need NVRTC, and ones
//! that run only where something (an opt-in variable, the absence of
//! NVRTC) holds — each reported as ignored, with the reason, where it
//! cannot run, never as a silent `ok`.
//!
//! NVRTC trials run where `libnvrtc.so.13` is found (see
//! `autarky::runtime::nvrtc`; `AUTARKY_NVRTC_DIR` points at a pip wheel's
//! `nvidia/cu13/lib`). Without it they are `ignored (no NVRTC: …)`, unless
//! `AUTARKY_REQUIRE_NVRTC=1` (CI sets it): then they fail with the search
//! path instead.

use libtest_mimic::{Completion, Failed, Trial};

/// Why NVRTC trials are ignored here: short, for the summary line.
pub const NO_NVRTC: &str = "no NVRTC: libnvrtc.so.13 not found; \
     pip install nvidia-cuda-nvrtc==13.0.88 and set AUTARKY_NVRTC_DIR to its nvidia/cu13/lib";

/// `AUTARKY_REQUIRE_NVRTC=1`: a missing NVRTC fails NVRTC trials.
pub fn nvrtc_required() -> bool {
    std::env::var("AUTARKY_REQUIRE_NVRTC").as_deref() == Ok("1")
}

/// `Ok` when NVRTC loads, else the full error (every path tried).
pub fn nvrtc_found() -> Result<(), String> {
    autarky::runtime::nvrtc::nvrtc_info()
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// What an NVRTC trial does where NVRTC is missing: `None` when it is
/// present (run the body), else ignored with [`NO_NVRTC`], or a failure
/// when `AUTARKY_REQUIRE_NVRTC=1`.
pub fn without_nvrtc() -> Option<Result<Completion, Failed>> {
    match nvrtc_found() {
        Ok(()) => None,
        Err(_) if !nvrtc_required() => Some(Ok(Completion::ignored_with(NO_NVRTC))),
        Err(e) => Some(Err(Failed::from(format!(
            "AUTARKY_REQUIRE_NVRTC=1 but {e}"
        )))),
    }
}

/// A trial that needs nothing: `body` panics (assert!, unwrap) to fail.
pub fn trial(name: &str, body: impl FnOnce() + Send + 'static) -> Trial {
    Trial::test(name, move || {
        body();
        Ok(())
    })
}

/// A trial that needs NVRTC (and no GPU): runs `body` where NVRTC loads;
/// elsewhere ignored with the reason, or failed when it is required.
pub fn nvrtc_trial(name: &str, body: impl FnOnce() + Send + 'static) -> Trial {
    Trial::ignorable_test(name, move || match without_nvrtc() {
        Some(outcome) => outcome,
        None => {
            body();
            Ok(Completion::Completed)
        }
    })
}

/// A trial that runs `body` unless `cannot_run` (called when the trial
/// starts) says why it cannot run here; then it is ignored with that
/// reason. For conditions nothing requires (an opt-in variable).
pub fn trial_unless(
    name: &str,
    cannot_run: impl FnOnce() -> Option<String> + Send + 'static,
    body: impl FnOnce() + Send + 'static,
) -> Trial {
    Trial::ignorable_test(name, move || match cannot_run() {
        Some(reason) => Ok(Completion::ignored_with(reason)),
        None => {
            body();
            Ok(Completion::Completed)
        }
    })
}
