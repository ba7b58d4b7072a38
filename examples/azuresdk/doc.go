// Package azuresdk checks forward/forwardtest's DCR server against the
// Azure SDK for Go: azidentity.ClientSecretCredential gets its token from
// the server's Entra ID stand-in and azlogs uploads rows to its Logs
// Ingestion API, exactly as they would to Azure.
//
// It is a module of its own so that the Azure SDK enters neither the
// library's module graph nor the examples'. It has tests only.
package azuresdk
