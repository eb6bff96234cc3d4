// Package model holds the console's domain types and their typed
// constants: what a topic partition, an offset sync, a failover run, a
// savepoint, a user or an audit record is, and the values the pages show as
// services compute them (a flow's lag, a savepoint's verdict, an RPO
// report). It imports nothing of ours, so every other package can speak it.
package model
