// Package static holds the console's browser assets, embedded in the binary
// so it works in an isolated network: vendored htmx (pinned in
// package.json, copied by `make vendor`), the stylesheet and a little script.
package static

import "embed"

// FS is served under /static/.
//
//go:embed app.css app.js vendor
var FS embed.FS
