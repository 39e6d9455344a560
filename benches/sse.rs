//! Issue 24: reading one huge event of a streamed answer. The parser held
//! the unfinished line and searched it again from its start for every
//! chunk, so a 40 MB event in 16 KB chunks cost time quadratic in its size;
//! now only the new bytes are searched.

use std::hint::black_box;

use cairn::llm::sse::SseParser;
use criterion::{Criterion, criterion_group, criterion_main};

const CHUNK: usize = 16 * 1024;

fn event(mb: usize) -> Vec<u8> {
    let mut body = b"event: content_block_delta\ndata: ".to_vec();
    body.extend(std::iter::repeat_n(b'a', mb << 20));
    body.extend_from_slice(b"\n\n");
    body
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("sse");
    group.sample_size(10);
    for mb in [40, 100] {
        let body = event(mb);
        group.bench_function(format!("one_{mb}_mb_event_in_16_kb_chunks"), |b| {
            b.iter(|| {
                let mut parser = SseParser::default();
                let mut out = Vec::new();
                for chunk in body.chunks(CHUNK) {
                    parser.push(black_box(chunk), &mut out);
                }
                parser.finish(&mut out);
                assert_eq!(out.len(), 1);
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
