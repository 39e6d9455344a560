//! Everything between the drawn frame and the terminal: setting the
//! terminal up and restoring it (on exit, panic, signals and suspend), and
//! the frame flush (cell diff, scroll regions, synchronized output). The
//! pacing of frames is the runtime's loop (`super::runtime`).

pub mod flush;
pub mod late_answers;
pub mod suspend;
pub mod terminal;
