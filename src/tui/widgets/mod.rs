pub mod cell;
pub mod diff_view;
pub mod help;
pub mod input;
pub mod permission_dialog;
pub mod status_bar;
pub mod tool_cell;
pub mod transcript;
