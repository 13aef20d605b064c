package redisstore

// ForceScriptClaims makes s claim with claimScript, as it does on a server
// older than Redis 7.0.
func ForceScriptClaims(s *ClaimStore) { s.claims.Store(claimsScript) }

// ClaimsNative says whether s claims with one native command; false until
// its first Claim read the server's version.
func ClaimsNative(s *ClaimStore) bool { return s.claims.Load() == claimsNative }

// ServerMajor is serverMajor.
var ServerMajor = serverMajor
