// Package configtest is `relay test`: test files of cases (an input and
// what must come out of the config's routes), run without opening a
// socket (RunTests: the inputs' parsers, the routes' specs, recorders
// for destinations, the Sentinel and HEC encoders), reported as text or
// JUnit XML (Command). The service does not link it.
package configtest
