package identity

import (
	"fmt"
	"sync"

	"golang.org/x/crypto/bcrypt"
)

// MinPasswordLen is the shortest password accepted (NIST SP 800-63B asks
// for at least 8; these accounts can fail over production).
const MinPasswordLen = 12

// maxPasswordLen is bcrypt's limit: it ignores bytes past 72.
const maxPasswordLen = 72

// HashCost is the bcrypt cost: about a quarter of a second per sign-in on
// a small machine. Tests lower it.
var HashCost = 12

// CheckPasswordRules says what is wrong with a new password, or nil.
func CheckPasswordRules(pw string) error {
	switch {
	case len(pw) < MinPasswordLen:
		return fmt.Errorf("password too short: at least %d characters", MinPasswordLen)
	case len(pw) > maxPasswordLen:
		return fmt.Errorf("password too long: bcrypt uses at most %d bytes", maxPasswordLen)
	}
	return nil
}

// HashPassword returns the bcrypt hash of a password that passed
// CheckPasswordRules.
func HashPassword(pw string) (string, error) {
	if err := CheckPasswordRules(pw); err != nil {
		return "", err
	}
	h, err := bcrypt.GenerateFromPassword([]byte(pw), HashCost)
	if err != nil {
		return "", fmt.Errorf("hashing password: %w", err)
	}
	return string(h), nil
}

var (
	dummyOnce sync.Once
	dummyHash []byte
)

// CheckPassword reports whether pw matches hash. An empty hash (unknown
// user, or an account without a password) is compared against a dummy
// hash of the same cost, so a wrong user name takes as long to refuse as a
// wrong password and response times do not reveal which accounts exist.
func CheckPassword(hash, pw string) bool {
	h := []byte(hash)
	if hash == "" {
		dummyOnce.Do(func() {
			dummyHash, _ = bcrypt.GenerateFromPassword([]byte("no such user, no such password"), HashCost)
		})
		h = dummyHash
	}
	err := bcrypt.CompareHashAndPassword(h, []byte(pw))
	return err == nil && hash != ""
}
