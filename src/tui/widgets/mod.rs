//! Drawing pieces used by the main screen and the dialogs: the transcript
//! and its cells (messages, tool calls, diffs), the prompt input, the
//! status bar, the `/` menu, pickers and text fields, and `overlay`, which
//! draws anything over the screen without letting what is under it show
//! through. A widget holds no dialog's state and answers no key on its own;
//! dialogs are in `super::panels`.

pub mod attachment;
pub mod cell;
pub mod diff_view;
pub mod hint;
pub mod input;
pub mod mcp_preview;
pub mod overlay;
pub mod picker;
pub mod slash_menu;
pub mod sources;
pub mod status_bar;
pub mod sub_transcript;
pub mod text_field;
pub mod tool_cell;
pub mod transcript;
