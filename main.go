// Command drconsole is a web console for Kafka disaster recovery: it watches
// MirrorMaker 2 replication between a primary and a DR cluster and shows
// what a failover right now would lose. The command line is package cli.
package main

import "github.com/drconsole/drconsole/cli"

// version is set by the build (-ldflags "-X main.version=...").
var version = "dev"

func main() { cli.Main(version) }
