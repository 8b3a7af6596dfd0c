//! GUM (seed 001): bulk-synchronous multi-GPU graph processing with frontier stealing
//! (FSteal, §III) and ownership stealing (OSteal, §IV).

pub mod cost_model;
pub mod planner;
