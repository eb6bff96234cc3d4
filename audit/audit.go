// Package audit is the one door to the tamper-evident audit chain. Every
// record is built here; a record that describes a state change is written
// in the same SQLite transaction as the change (With), so the chain never
// claims a change that did not happen and no change escapes the chain.
//
// Written is the proof that a record reached the chain: effects on systems
// outside the console (runbook/internal/effect) demand one, so an effect
// whose record could not be written does not compile, let alone run.
package audit

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
)

// Client is where a request came from, as the web middleware saw it.
type Client struct {
	IP        string
	UserAgent string
}

type clientKey struct{}

// WithClient returns ctx carrying the client every record made under it
// names.
func WithClient(ctx context.Context, c Client) context.Context {
	return context.WithValue(ctx, clientKey{}, c)
}

// ClientFrom is the client ctx carries; "local" for work that did not come
// through the web (command line, start-up, background workers).
func ClientFrom(ctx context.Context) Client {
	if c, ok := ctx.Value(clientKey{}).(Client); ok {
		return c
	}
	return Client{IP: "local"}
}

// Written proves that a record reached the chain. Only this package makes
// one, and only after the write succeeded.
type Written struct {
	id     int64
	action Action
}

// ID is the record's position in the chain.
func (w Written) ID() int64 { return w.id }

// Action is what the record says was done.
func (w Written) Action() Action { return w.action }

// Valid reports whether w came from a successful write (the zero Written
// did not).
func (w Written) Valid() bool { return w.id > 0 }

// Entry builds the record of actor doing action to subject, with details
// (any JSON-encodable value; nil is {}) and the client from ctx. Callers
// that change state hand it to a storage method that writes it in the
// change's transaction (see With).
func Entry(ctx context.Context, actor string, action Action, subject string, details any) (model.AuditEntry, error) {
	var body []byte
	if details != nil {
		var err error
		if body, err = json.Marshal(details); err != nil {
			return model.AuditEntry{}, fmt.Errorf("audit %s: %w", action, err)
		}
	}
	c := ClientFrom(ctx)
	return model.AuditEntry{Actor: actor, Action: string(action), ClientIP: c.IP, UserAgent: c.UserAgent,
		Subject: subject, Details: body}, nil
}

// Recorder appends to the chain of one store.
type Recorder struct{ store *storage.Store }

// New returns the recorder of store's chain.
func New(store *storage.Store) *Recorder { return &Recorder{store: store} }

// Record appends one record on its own: for actions that change nothing
// in the console's own state (sign-in, a refused request, an outcome).
func (r *Recorder) Record(ctx context.Context, actor string, action Action, subject string, details any) (Written, error) {
	e, err := Entry(ctx, actor, action, subject, details)
	if err != nil {
		return Written{}, err
	}
	e, err = r.store.AppendAudit(ctx, e)
	if err != nil {
		return Written{}, err
	}
	return Written{id: e.ID, action: Action(e.Action)}, nil
}

// With builds the record and passes it to write, which must store it in the
// same transaction as the state change it describes and return the stored
// record (with its ID). Nothing is written when either fails.
func (r *Recorder) With(ctx context.Context, actor string, action Action, subject string, details any,
	write func(model.AuditEntry) (model.AuditEntry, error)) (Written, error) {
	e, err := Entry(ctx, actor, action, subject, details)
	if err != nil {
		return Written{}, err
	}
	if e, err = write(e); err != nil {
		return Written{}, err
	}
	return Written{id: e.ID, action: Action(e.Action)}, nil
}
