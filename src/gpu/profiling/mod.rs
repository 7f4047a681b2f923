//! What the GPU's work costs: the counting layer every pass, dispatch, submit, read-back, upload and wait
//! goes through ([`cost`]), the cost model a planned frame is held to ([`cost_model`]) and the GPU
//! timestamps per phase and per kernel ([`timestamps`]).

pub mod cost;
pub mod cost_model;
pub mod timestamps;
