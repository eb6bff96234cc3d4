package web_test

import "github.com/drconsole/drconsole/web"

// flushFailures closes every counting window of s's failed sign-ins, as
// Serve does at shutdown.
func flushFailures(s *authServer) { s.h.(*web.Console).Failures.Flush() }
