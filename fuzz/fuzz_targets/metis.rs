//! Fuzz the Metis parser: any bytes, read as Metis (and through detection), must give a graph or
//! an error, never a panic; a graph that loads must write and load back.
#![no_main]

#[path = "common.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use switchyard::graph::formats::GraphFormat;

fuzz_target!(|data: &[u8]| common::parse_write_parse(data, GraphFormat::Metis));
