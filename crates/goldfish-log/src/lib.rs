pub mod merge;
pub mod record;
