// Package mm2 is what the console knows about MirrorMaker 2, and nothing
// else: the byte layouts of its internal records (offset syncs,
// checkpoints, heartbeats, Connect source offsets), its topic names under
// the default and identity replication policies, the offset translation
// rule, the in-memory index of offset syncs it runs on, and the offsets
// file format of `drconsole translate`. It reads no cluster and no
// database: it imports only model, so every rule here is testable on bytes.
package mm2
