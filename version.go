package payments

// Version is the version of this SDK. It is sent in the User-Agent header of
// every request so that the service's operators can tell SDK releases apart.
const Version = "0.1.0"
