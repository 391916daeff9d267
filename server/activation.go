package server

import (
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/jwt/v2"

	"github.com/bus-dev/bus/subjects"
)

// Activation tokens: an account JWT may export a stream or a service with
// token_req, and then only accounts that hold an activation token for it
// may import it. The token is a JWT (jwt.ActivationClaims) signed by the
// exporting account or one of its signing keys, whose subject is the
// importing account; the import carries it. bus checks every import of
// the account JWTs here, once per compiled account set, as the reference
// checks them when it registers an account: an import it cannot honour (a
// missing account, nothing exported there, a bad or missing token) is
// skipped with a log line naming it and why, and the other imports and
// accounts work. A token-required export becomes an export to exactly the
// accounts whose tokens passed.

// importGrants is the outcome of checking the account JWTs' imports: the
// imports to honour, and for each token-required export the importers
// whose activation tokens it accepted.
type importGrants struct {
	keep    map[*jwt.Import]bool
	granted map[*jwt.Export][]string
	// nextExpiry is the earliest expiry of an accepted activation token,
	// zero for none: the set must be compiled again then, so the import
	// stops as the reference stops it.
	nextExpiry time.Time
}

// checkImports decides, for every import of t's accounts but the system
// account's, whether it is honoured at now, logging each one skipped.
func (t *trust) checkImports(now time.Time, log *slog.Logger) *importGrants {
	g := &importGrants{keep: map[*jwt.Import]bool{}, granted: map[*jwt.Export][]string{}}
	for _, key := range sortedClaimKeys(t.accounts) {
		if key == t.system {
			continue
		}
		for _, im := range t.accounts[key].Imports {
			export, expires, reason := t.authorizeImport(key, im, now)
			if reason != "" {
				log.Warn("account JWT import skipped", "account", key, "import", string(im.Subject),
					"type", im.Type.String(), "from", im.Account, "reason", reason)
				continue
			}
			g.keep[im] = true
			if export != nil && export.TokenReq && !slices.Contains(g.granted[export], key) {
				g.granted[export] = append(g.granted[export], key)
			}
			if expires > 0 {
				at := time.Unix(expires, 0)
				if g.nextExpiry.IsZero() || at.Before(g.nextExpiry) {
					g.nextExpiry = at
				}
			}
		}
	}
	return g
}

// authorizeImport finds the export of im's account that im imports from
// and checks im's activation token when that export requires one. It
// returns the export, the token's expiry (0 for none) and "", or why im
// cannot be honoured.
func (t *trust) authorizeImport(importer string, im *jwt.Import, now time.Time) (*jwt.Export, int64, string) {
	exporter := t.accounts[im.Account]
	switch {
	case im.Account == importer:
		return nil, 0, "an account cannot import from itself"
	case exporter == nil || im.Account == t.system:
		return nil, 0, "account " + im.Account + " not found"
	case !subjects.ValidSubject(string(im.Subject)):
		return nil, 0, "invalid subject"
	}
	e := exportFor(exporter, im)
	if e == nil {
		if im.IsService() {
			return nil, 0, errServiceImportAuth + ": not exported"
		}
		return nil, 0, errStreamImportAuth + ": not exported"
	}
	if pos := e.AccountTokenPosition; pos > 0 {
		// The export is per account: the import's subject must name the
		// importing account at that token, as the reference checks it
		// (before and instead of any activation token).
		tokens := strings.Split(string(im.Subject), ".")
		if int(pos) > len(tokens) || tokens[pos-1] != importer {
			return nil, 0, fmt.Sprintf("token %d of the subject must be the importing account's key (account_token_position)", pos)
		}
		return e, 0, ""
	}
	if !e.TokenReq {
		return e, 0, ""
	}
	expires, reason := checkActivation(exporter, e, importer, im, now)
	if reason != "" {
		return nil, 0, "activation token: " + reason
	}
	return e, expires, ""
}

// exportFor is the export of ac that im imports: the one of exactly its
// subject, else the first whose subject covers it, as the reference looks
// them up; nil for none.
func exportFor(ac *jwt.AccountClaims, im *jwt.Import) *jwt.Export {
	var covering *jwt.Export
	for _, e := range ac.Exports {
		if e.Type != im.Type {
			continue
		}
		if e.Subject == im.Subject {
			return e
		}
		if covering == nil && subjects.Within(string(im.Subject), string(e.Subject)) {
			covering = e
		}
	}
	return covering
}

// checkActivation checks im's activation token for export e of exporter
// into importer at now: a valid activation JWT, issued by the exporting
// account or one of its signing keys to the importing account, for this
// kind of import and a subject covering it, in its time window and not
// revoked in e. It returns the token's expiry (0 for none) and "", or
// why the token fails.
func checkActivation(exporter *jwt.AccountClaims, e *jwt.Export, importer string, im *jwt.Import, now time.Time) (int64, string) {
	if im.Token == "" {
		return 0, "the export requires one and the import has none"
	}
	if len(im.Token) > maxJWTLen {
		return 0, "too long"
	}
	act, err := jwt.DecodeActivationClaims(im.Token)
	if err != nil {
		return 0, "not valid: " + err.Error()
	}
	subject := im.Subject
	//lint:ignore SA1019 a service import's To is the subject it imports in account JWTs issued before local_subject existed
	if im.IsService() && im.To != "" {
		//lint:ignore SA1019 as above
		subject = im.To
	}
	switch {
	case act.Subject != importer:
		return 0, fmt.Sprintf("issued to account %s, not to %s", act.Subject, importer)
	case !activationIssuerTrusted(exporter, act):
		return 0, fmt.Sprintf("signed by %s, neither account %s nor one of its signing keys", act.Issuer, exporter.Subject)
	case act.ImportType != im.Type:
		return 0, fmt.Sprintf("for a %s import, not a %s one", act.ImportType, im.Type)
	case !subject.IsContainedIn(act.ImportSubject):
		return 0, fmt.Sprintf("for subject %q, which does not cover %q", act.ImportSubject, im.Subject)
	case act.Expires > 0 && act.Expires <= now.Unix():
		return 0, "expired"
	case act.NotBefore > 0 && now.Unix() < act.NotBefore:
		return 0, "not yet valid"
	case revokedAt(e.Revocations, act.Subject, act.IssuedAt):
		return 0, "revoked by the export"
	}
	if p := claimsProblem(act); p != "" {
		return 0, "not valid: " + p
	}
	return act.Expires, ""
}

// activationIssuerTrusted reports whether the exporting account signed
// act: with its own key, or (issuer_account naming it) one of its
// signing keys.
func activationIssuerTrusted(exporter *jwt.AccountClaims, act *jwt.ActivationClaims) bool {
	if act.IssuerAccount == "" {
		return act.Issuer == exporter.Subject
	}
	return act.IssuerAccount == exporter.Subject &&
		(act.Issuer == exporter.Subject || exporter.SigningKeys.Contains(act.Issuer))
}

// revokedAt reports whether revocations revoke what key was issued at
// issuedAt: an entry for key, or for every key (jwt.All), at or after
// it, as the reference reads them.
func revokedAt(revocations jwt.RevocationList, key string, issuedAt int64) bool {
	if t, ok := revocations[key]; ok && t >= issuedAt {
		return true
	}
	t, ok := revocations[jwt.All]
	return ok && t >= issuedAt
}

// sortedClaimKeys lists m's keys sorted, so logs come in a stable order.
func sortedClaimKeys(m map[string]*jwt.AccountClaims) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
