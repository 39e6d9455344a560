//! The real-model test in a binary of its own: cargo runs test binaries
//! one after another, so llama.cpp's server (which takes both cores while
//! it answers) never runs beside the pseudo-terminal tests of the suite,
//! and neither slows the other.

#[path = "../support/pty.rs"]
mod pty;
#[path = "../support/test_home.rs"]
mod test_home;

mod llama;
