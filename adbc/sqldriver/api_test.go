package sqldriver_test

import (
	"context"
	"database/sql/driver"

	"github.com/apache/arrow-adbc/go/adbc"
	"github.com/purearrow/cdevice/adbc/sqldriver"
)

// The exported API of arrow-adbc's sqldriver (release 24), each name with
// its signature there: this file compiles only while they match.
var (
	_                      = sqldriver.Driver{Driver: adbc.Driver(nil)}
	_ driver.Driver        = sqldriver.Driver{}
	_ driver.DriverContext = sqldriver.Driver{}

	_ func(sqldriver.Driver, string) (driver.Conn, error)      = sqldriver.Driver.Open
	_ func(sqldriver.Driver, string) (driver.Connector, error) = sqldriver.Driver.OpenConnector
	_ func(context.Context, map[string]string) context.Context = sqldriver.SetOptionsInCtx
	_ func(context.Context) map[string]string                  = sqldriver.GetOptionsFromCtx
)
