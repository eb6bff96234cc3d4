package handlers

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/identity"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/storage"
	"github.com/drconsole/drconsole/views"
)

// The API tokens page (/account/tokens): everyone signed in makes, lists
// and revokes their own tokens; an admin sees and revokes everyone's.
// identity/tokens.go makes them (audited, stored hashed).

// tokensListed bounds the tokens the page lists per table.
const tokensListed = 200

type tokensOpts struct {
	flash, err      string
	newToken, named string
	name, scope     string
	days            int
}

// Tokens is GET /account/tokens.
func (h *Handlers) Tokens(w http.ResponseWriter, r *http.Request) {
	h.renderTokens(w, r, http.StatusOK, tokensOpts{})
}

func (h *Handlers) renderTokens(w http.ResponseWriter, r *http.Request, status int, o tokensOpts) {
	ctx := r.Context()
	me := identity.UserFrom(ctx)
	now := h.now()
	if o.days == 0 {
		o.days = int(identity.DefaultTokenTTL.Hours() / 24)
	}
	p := views.TokensPage{Chrome: h.chrome("API tokens"), Me: me.Name, NewToken: o.newToken, NewTokenName: o.named,
		Flash: o.flash, Error: o.err, Name: o.name, Scope: o.scope, Days: o.days,
		MaxDays: int(identity.MaxTokenTTL.Hours() / 24), CanOperate: me.AtLeast(model.RoleOperator)}
	mine, err := h.Store.APITokens(ctx, me.Name, tokensListed)
	if err != nil {
		h.fail(w, r, say("cannot read the API tokens", err))
		return
	}
	p.Mine = tokenRows(mine, now)
	if me.AtLeast(model.RoleAdmin) {
		all, err := h.Store.APITokens(ctx, "", tokensListed)
		if err != nil {
			h.fail(w, r, say("cannot read the API tokens", err))
			return
		}
		var others []storage.APIToken
		for _, t := range all {
			if !strings.EqualFold(t.User, me.Name) {
				others = append(others, t)
			}
		}
		p.Others = tokenRows(others, now)
		if p.Others == nil {
			p.Others = []views.TokenRow{}
		}
	}
	h.render(w, r, status, views.Tokens(p))
}

func tokenRows(ts []storage.APIToken, now time.Time) []views.TokenRow {
	var rows []views.TokenRow
	for _, t := range ts {
		row := views.TokenRow{ID: t.ID, Prefix: t.Prefix, Owner: t.User, Name: t.Name, Scope: t.Scope,
			Created: views.AuditTime(t.CreatedMs)[:16], Expires: views.AuditTime(t.ExpiresMs)[:16], LastUsed: "never", Live: t.Live(now)}
		if t.LastUsedMs != 0 {
			row.LastUsed = views.AuditTime(t.LastUsedMs)[:16]
		}
		switch {
		case t.RevokedMs != 0:
			row.State = "revoked by " + t.RevokedBy + " " + views.AuditTime(t.RevokedMs)[:16]
		case !row.Live:
			row.State = "expired"
		default:
			row.State = "live"
		}
		rows = append(rows, row)
	}
	return rows
}

// TokenCreate is POST /account/tokens: the new token is on the page it
// answers with, once.
func (h *Handlers) TokenCreate(w http.ResponseWriter, r *http.Request) {
	me := identity.UserFrom(r.Context())
	o := tokensOpts{name: strings.TrimSpace(r.FormValue("name")), scope: r.FormValue("scope")}
	days, err := strconv.Atoi(strings.TrimSpace(r.FormValue("days")))
	if err != nil {
		o.err = "Expires after: a whole number of days"
		h.renderTokens(w, r, statusFor(errInvalid), o)
		return
	}
	o.days = days
	if o.scope == identity.ScopeOperate && !me.AtLeast(model.RoleOperator) {
		// It would act as a viewer anyway (the scope caps the role, never
		// raises it); saying so beats a token that looks stronger than it is.
		o.err = "You are " + string(me.Role) + ": an operate token would still only read. Make a read token."
		h.renderTokens(w, r, statusFor(runbook.ErrRole), o)
		return
	}
	q := identity.TokenRequest{Name: o.name, Scope: o.scope, TTL: time.Duration(days) * 24 * time.Hour}
	token, t, err := identity.CreateToken(r.Context(), h.Store, audit.New(h.Store), me.Name, q, h.now())
	switch {
	case errors.Is(err, identity.ErrTokenRequest), errors.Is(err, identity.ErrTooManyTokens):
		o.err = strings.TrimPrefix(err.Error(), identity.ErrTokenRequest.Error()+": ")
		h.renderTokens(w, r, statusFor(refused(err)), o)
		return
	case errors.Is(err, storage.ErrUnknownUser):
		o.err = "API tokens belong to an account in the console's users table, and " + me.Name + " has none (signed in through the proxy's groups): ask an admin to add the account."
		h.renderTokens(w, r, statusFor(err), o)
		return
	case err != nil:
		h.fail(w, r, say("the token was not made", err))
		return
	}
	h.renderTokens(w, r, http.StatusCreated, tokensOpts{newToken: token, named: t.Name})
}

// TokenRevoke is POST /account/tokens/{id}/revoke: your own, or anyone's
// for an admin.
func (h *Handlers) TokenRevoke(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(chi.URLParam(r, "id"), 10, 64)
	if err != nil || id < 1 {
		h.fail(w, r, badRequest("bad token id"))
		return
	}
	me := identity.UserFrom(r.Context())
	err = identity.RevokeToken(r.Context(), h.Store, audit.New(h.Store), *me, id, h.now())
	switch {
	case errors.Is(err, storage.ErrNotFound):
		h.renderTokens(w, r, statusFor(err), tokensOpts{err: "No such token of yours."})
	case errors.Is(err, storage.ErrConflict):
		h.renderTokens(w, r, statusFor(err), tokensOpts{err: "That token is revoked already."})
	case err != nil:
		h.fail(w, r, say("the token was not revoked", err))
	default:
		h.renderTokens(w, r, http.StatusOK, tokensOpts{flash: "Revoked: the token stops working now."})
	}
}
