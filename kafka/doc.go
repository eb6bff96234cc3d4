// Package kafka reads the mirrored clusters with franz-go: client options
// from the config (client.go), first-record timestamps and record-batch
// scanning for aborted transactions (fetchts.go, aborted.go), and consumer
// group reads and offset translation plans (groups.go; its offset commits
// leave for the failover effect boundary). The REST clients
// for Kafka Connect and Confluent Cluster Linking (connect.go,
// clusterlink.go) still live here until they get packages of their own.
// What MM2's records mean is package mm2's; the refresh loop that uses
// these reads is package monitor's.
package kafka
