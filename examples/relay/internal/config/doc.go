// Package config owns the relay's configuration format: the YAML file
// (Config, LoadConfig: the embedded default.yaml overlaid by the
// operator's file, ${VAR} expansion, strict keys), the section of every
// input kind (InputsConfig: one field per kind, each an InputSection the
// input registry builds from), routes and steps, sources, spool, API
// and metrics, and the checks that fill each section's defaults and
// name the field at fault. Destination types register their sections
// here (RegisterDestType; package dest does). It builds nothing of the
// service and imports no other relay package.
package config
