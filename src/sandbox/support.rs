//! What this machine can enforce: Landlock's ABI, seccomp, bubblewrap,
//! Seatbelt — probed once and kept for the process.

use std::sync::OnceLock;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Support {
    /// The Landlock ABI the kernel offers; 0 when it offers none.
    pub landlock_abi: u8,
    /// seccomp filters can be installed.
    pub seccomp: bool,
    /// macOS with `sandbox-exec`.
    pub seatbelt: bool,
}

impl Support {
    /// Asked of the kernel once per process.
    pub fn detect() -> Support {
        static CACHE: OnceLock<Support> = OnceLock::new();
        *CACHE.get_or_init(probe)
    }

    /// Writes and secrets are confined.
    pub fn enforces_files(&self) -> bool {
        self.landlock_abi > 0 || self.seatbelt
    }

    /// The network can be turned off.
    pub fn enforces_network(&self) -> bool {
        self.seccomp || self.landlock_abi >= 4 || self.seatbelt
    }

    /// What an older kernel leaves out, in words.
    pub fn gaps(&self) -> Vec<&'static str> {
        let abi = self.landlock_abi;
        let mut gaps = Vec::new();
        if abi == 0 {
            return gaps;
        }
        if abi < 2 {
            gaps.push("moving files between directories is refused everywhere (Landlock ABI < 2)");
        }
        if abi < 3 {
            gaps.push("truncating files is not confined (Landlock ABI < 3)");
        }
        if abi < 4 {
            gaps.push("no Landlock TCP rules (ABI < 4); the network is filtered by seccomp alone");
        }
        if abi < 5 {
            gaps.push("device ioctls are not confined (Landlock ABI < 5)");
        }
        if abi < 6 {
            gaps.push("commands may signal processes outside the sandbox (Landlock ABI < 6)");
        }
        gaps
    }
}

#[cfg(target_os = "linux")]
fn probe() -> Support {
    // LANDLOCK_CREATE_RULESET_VERSION: asks for the ABI, creates nothing.
    // SAFETY: a null attribute with size 0 and this flag is the documented query.
    let abi = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            1u32,
        )
    };
    // SAFETY: PR_GET_SECCOMP only reads this thread's mode.
    let seccomp = unsafe { libc::prctl(libc::PR_GET_SECCOMP, 0, 0, 0, 0) } >= 0;
    Support {
        landlock_abi: abi.clamp(0, 255) as u8,
        seccomp,
        seatbelt: false,
    }
}

#[cfg(target_os = "macos")]
fn probe() -> Support {
    Support {
        landlock_abi: 0,
        seccomp: false,
        seatbelt: std::path::Path::new(super::seatbelt::SANDBOX_EXEC).exists(),
    }
}

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
fn probe() -> Support {
    Support {
        landlock_abi: 0,
        seccomp: false,
        seatbelt: false,
    }
}
