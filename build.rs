//! Link settings for the release binary.
//!
//! The binary is position-independent and carries about 60,000 relative
//! relocations. Written one per entry they take 1.4 MB, which the loader
//! reads (and keeps resident) at every start; packed (`DT_RELR`) they take
//! a few kilobytes. The packed form needs glibc 2.36 or later where the
//! binary runs, so it is used only for a native build against a C library
//! that says it supports it; an older linker ignores the flag with a
//! warning.

use std::env;
use std::path::Path;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let var = |k: &str| env::var(k).unwrap_or_default();
    let native_gnu = var("TARGET") == var("HOST") && var("TARGET").ends_with("-linux-gnu");
    if var("PROFILE") == "release" && native_gnu && libc_reads_packed_relocations() {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}

/// Whether the system's glibc declares the `GLIBC_ABI_DT_RELR` version
/// (glibc 2.36 and later).
fn libc_reads_packed_relocations() -> bool {
    let arch = env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    let places = [
        format!("/lib/{arch}-linux-gnu/libc.so.6"),
        format!("/usr/lib/{arch}-linux-gnu/libc.so.6"),
        "/lib64/libc.so.6".to_string(),
        "/usr/lib64/libc.so.6".to_string(),
        "/usr/lib/libc.so.6".to_string(),
    ];
    places.iter().map(Path::new).any(|p| {
        std::fs::read(p).is_ok_and(|bytes| {
            bytes
                .windows(b"GLIBC_ABI_DT_RELR".len())
                .any(|w| w == b"GLIBC_ABI_DT_RELR")
        })
    })
}
