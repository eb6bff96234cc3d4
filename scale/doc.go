// Package scale is the scale rig behind `make scale`: two in-process Kafka
// clusters (kfake) holding N partitions over many topics, with the offset
// syncs, checkpoints and heartbeats MirrorMaker 2 writes; the real console
// started as a child process against them (its own RSS and CPU time, read
// from /proc); seeded RPO history in the console's SQLite; and a bounded,
// closed-loop load generator on 127.0.0.1 hitting the flow, overview and
// topic pages and /metrics. It reports req/s, latency percentiles, response
// sizes, RSS, CPU per request and the refresh interval observed under load
// as a markdown table, and writes CPU and heap profiles on demand.
//
// It is a measuring instrument, not a test of correctness: the smoke test
// only keeps it building and working at a tiny N.
package scale
