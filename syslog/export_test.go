package syslog

// HasControl exposes hasControl.
var HasControl = hasControl

// IsText exposes isText.
var IsText = isText
