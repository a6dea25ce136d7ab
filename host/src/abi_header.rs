//! Generates `device/include/autarky/abi.h` from the ABI crate's tables.
//!
//! The header is committed; `tests/abi.rs` fails when it is stale and says
//! how to regenerate it (`AUTARKY_BLESS=1 cargo test --test abi`). The
//! header also defines `autarky_abi_layout`, which the GPU layout probe
//! calls to write every struct's `sizeof`/`offsetof` back to the host.

use std::fmt::Write;

use autarky_shared::*;

/// Path of the generated header, relative to the repository root.
pub const HEADER_PATH: &str = "device/include/autarky/abi.h";

fn doc_lines(out: &mut String, doc: &str, indent: &str) {
    for line in doc.lines() {
        let line = line.trim();
        if line.is_empty() {
            let _ = writeln!(out, "{indent}//");
        } else {
            let _ = writeln!(out, "{indent}// {line}");
        }
    }
}

fn gen_struct<T: AbiStruct>(out: &mut String) {
    doc_lines(out, T::DOC, "");
    let _ = writeln!(out, "struct alignas({}) {} {{", T::ALIGN, T::NAME);
    for f in T::FIELDS {
        doc_lines(out, f.doc, "    ");
        if f.array > 0 {
            let _ = writeln!(out, "    {} {}[{}];", f.c_type, f.name, f.array);
        } else {
            let _ = writeln!(out, "    {} {};", f.c_type, f.name);
        }
    }
    let _ = writeln!(out, "}};");
    let _ = writeln!(
        out,
        "static_assert(sizeof({0}) == {1}, \"sizeof({0}) differs from Rust\");",
        T::NAME,
        T::SIZE
    );
    let _ = writeln!(
        out,
        "static_assert(alignof({0}) == {1}, \"alignof({0}) differs from Rust\");",
        T::NAME,
        T::ALIGN
    );
    out.push('\n');
}

fn gen_enum<E: AbiEnum>(out: &mut String) {
    doc_lines(out, E::DOC, "");
    let _ = writeln!(out, "enum class {} : uint32_t {{", E::NAME);
    for (name, value, doc) in E::VARIANTS {
        doc_lines(out, doc, "    ");
        let _ = writeln!(out, "    {name} = {value},");
    }
    let _ = writeln!(out, "}};\n");
}

/// The layout the probe kernel reports: for every struct in
/// `for_each_abi_struct!` order, its size then each field's offset.
pub fn expected_layout() -> Vec<u64> {
    let mut v = Vec::new();
    macro_rules! push {
        ($t:ident) => {
            v.push(<$t as AbiStruct>::SIZE as u64);
            for f in <$t as AbiStruct>::FIELDS {
                v.push(f.offset as u64);
            }
        };
    }
    for_each_abi_struct!(push);
    v
}

/// Labels for [`expected_layout`]'s entries (`TaskDesc`, `TaskDesc.kind`, ...).
pub fn layout_labels() -> Vec<String> {
    let mut v = Vec::new();
    macro_rules! push {
        ($t:ident) => {
            v.push(format!("sizeof({})", <$t as AbiStruct>::NAME));
            for f in <$t as AbiStruct>::FIELDS {
                v.push(format!("offsetof({}, {})", <$t as AbiStruct>::NAME, f.name));
            }
        };
    }
    for_each_abi_struct!(push);
    v
}

/// The word encodings of `autarky_shared` (`state_word`, `state_parts`,
/// `queue_slot_word`), as C. Their Rust twins are the `const fn`s of the ABI
/// crate; `tests/abi.rs` checks both against the same table of values
/// (`encoding_examples`), so the two sides cannot drift.
pub const ENCODINGS_C: &str = "\
// Word encodings (Rust: autarky_shared::{state_word, state_parts, pinned_state_word,
// state_carried_limit, queue_slot_word}).
// state[t] = (claimed << 32) | done.
__device__ __forceinline__ uint64_t state_word(uint32_t claimed, uint32_t done) {
    return ((uint64_t)claimed << 32) | done;
}
__device__ __forceinline__ uint32_t state_claimed(uint64_t word) { return (uint32_t)(word >> 32); }
__device__ __forceinline__ uint32_t state_done(uint64_t word) { return (uint32_t)word; }
// A pinned task's word: bit 31 of claimed set, the limit its block knew beside it.
__device__ __forceinline__ uint64_t pinned_state_word(uint32_t done, uint32_t limit) {
    return state_word(STATE_LIMIT_CARRIED | limit, done);
}
// The limit a word carries, or 0: none (read Status::limit).
__device__ __forceinline__ uint32_t state_carried_limit(uint64_t word) {
    const uint32_t claimed = state_claimed(word);
    return (claimed & STATE_LIMIT_CARRIED) ? (claimed & ~STATE_LIMIT_CARRIED) : 0u;
}
// QueueSlot::word = (seq << 32) | task.
__device__ __forceinline__ uint64_t queue_slot_word(uint32_t seq, uint32_t task) {
    return ((uint64_t)seq << 32) | task;
}
// Arrival slots (Rust: autarky_shared::{slot_word, slot_shift, slot_count,
// slot_add_mask}): slot j is field j % SLOT_FIELDS (16 bits) of word j / SLOT_FIELDS.
__device__ __forceinline__ uint64_t slot_word(uint32_t j) { return (uint64_t)(j / SLOT_FIELDS); }
__device__ __forceinline__ uint32_t slot_shift(uint32_t j) { return (j % SLOT_FIELDS) * 16u; }
__device__ __forceinline__ uint32_t slot_count(uint64_t word, uint32_t j) {
    return (uint32_t)((word >> slot_shift(j)) & 0xffffu);
}
__device__ __forceinline__ uint64_t slot_add_mask(uint32_t first, uint32_t k) {
    const uint32_t lo = first % SLOT_FIELDS;
    const uint32_t n = k < SLOT_FIELDS - lo ? k : SLOT_FIELDS - lo;
    return (0x0001000100010001ull >> (16u * (SLOT_FIELDS - n))) << (16u * lo);
}

";

/// The trace encodings in C (Rust: `autarky_shared::{trace_kind_block,
/// trace_wait_word, trace_area_records}`), after the enums they use.
pub const TRACE_ENCODINGS_C: &str = "\
// Trace encodings (Rust: autarky_shared::{trace_kind_block, trace_wait_word}).
__device__ __forceinline__ uint32_t trace_kind_block(TraceKind kind, uint32_t block) {
    return (uint32_t)kind | (block << 8);
}
__device__ __forceinline__ uint64_t trace_wait_word(WaitKind kind, uint32_t index) {
    return ((uint64_t)(uint32_t)kind << 32) | index;
}

";

/// The full text of `abi.h`.
pub fn generate() -> String {
    let mut out = String::new();
    out.push_str(
        "// GENERATED from shared/src/lib.rs by autarky::abi_header — do not edit.\n\
         // Regenerate: AUTARKY_BLESS=1 cargo test --test abi\n\
         #pragma once\n\n\
         // Device code is self-contained (NVRTC alone, no toolkit headers).\n\
         typedef unsigned char uint8_t;\n\
         typedef unsigned int uint32_t;\n\
         typedef int int32_t;\n\
         typedef unsigned long long uint64_t;\n\
         typedef long long int64_t;\n\n",
    );
    let _ = writeln!(out, "#define AUTARKY_ABI_VERSION {ABI_VERSION}u\n");
    out.push_str("namespace autarky {\n\n");
    let _ = writeln!(out, "constexpr uint32_t TASK_NONE = {TASK_NONE:#x}u;");
    let _ = writeln!(
        out,
        "constexpr uint32_t MAX_ITERATIONS = {MAX_ITERATIONS:#x}u;"
    );
    let _ = writeln!(
        out,
        "constexpr uint32_t STATE_LIMIT_CARRIED = {STATE_LIMIT_CARRIED:#x}u;"
    );
    let _ = writeln!(
        out,
        "constexpr uint32_t TEST_HOLD_TASK = {TEST_HOLD_TASK}u;"
    );
    let _ = writeln!(out, "constexpr uint32_t RUN_MAY_STOP = {RUN_MAY_STOP}u;");
    let _ = writeln!(
        out,
        "constexpr uint32_t RUN_STATE_SPREAD = {RUN_STATE_SPREAD}u;"
    );
    let _ = writeln!(
        out,
        "constexpr uint32_t STATE_SPREAD_WORDS = {STATE_SPREAD_WORDS}u;"
    );
    let _ = writeln!(out, "constexpr uint32_t MAX_LOCAL_PES = {MAX_LOCAL_PES}u;");
    let _ = writeln!(out, "constexpr uint32_t MAX_DISTANCE = {MAX_DISTANCE}u;");
    let _ = writeln!(out, "constexpr uint32_t ABORT_BY_HOST = {ABORT_BY_HOST}u;");
    let _ = writeln!(out, "constexpr uint32_t ABORT_BY_PE = {ABORT_BY_PE}u;");
    let _ = writeln!(out, "constexpr uint32_t WAKE_GROUP = {WAKE_GROUP}u;");
    let _ = writeln!(out, "constexpr uint32_t WAKE_STRIDE = {WAKE_STRIDE}u;");
    let _ = writeln!(out, "constexpr uint32_t SLOT_FIELDS = {SLOT_FIELDS}u;");
    let _ = writeln!(
        out,
        "constexpr uint32_t SLOT_MAX_COUNT = {SLOT_MAX_COUNT}u;"
    );
    let _ = writeln!(
        out,
        "constexpr uint32_t PROGRESS_SWEEP_TASKS = {PROGRESS_SWEEP_TASKS}u;\n"
    );
    out.push_str(ENCODINGS_C);
    gen_enum::<ErrorCode>(&mut out);
    gen_enum::<WaitKind>(&mut out);
    gen_enum::<Role>(&mut out);
    gen_enum::<TraceKind>(&mut out);
    out.push_str(TRACE_ENCODINGS_C);
    macro_rules! s {
        ($t:ident) => {
            gen_struct::<$t>(&mut out)
        };
    }
    for_each_abi_struct!(s);
    out.push_str("}  // namespace autarky\n\n");
    out.push_str(
        "// Writes sizeof/offsetof of every ABI struct, in the order of\n\
         // autarky::abi_header::expected_layout(), for the GPU layout probe.\n\
         // (NVRTC has no constant-expression offsetof, so field offsets are\n\
         // checked here, on the device, rather than by static_assert.)\n\
         __device__ inline void autarky_abi_layout(unsigned long long* out) {\n    unsigned i = 0;\n",
    );
    macro_rules! probe {
        ($t:ident) => {
            let _ = writeln!(out, "    out[i++] = sizeof(autarky::{});", <$t as AbiStruct>::NAME);
            let _ = writeln!(out, "    {{ autarky::{} s{{}};", <$t as AbiStruct>::NAME);
            for f in <$t as AbiStruct>::FIELDS {
                let _ = writeln!(
                    out,
                    "      out[i++] = (unsigned long long)((const char*)&s.{} - (const char*)&s);",
                    f.name
                );
            }
            let _ = writeln!(out, "    }}");
        };
    }
    for_each_abi_struct!(probe);
    out.push_str("}\n");
    out
}
