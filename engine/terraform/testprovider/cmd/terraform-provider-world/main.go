// Command terraform-provider-world is the test provider of package
// testprovider, served to Terraform as strata.test/strata/world.
package main

import (
	"context"
	"log"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"strata.dev/strata/engine/terraform/testprovider"
)

func main() {
	err := providerserver.Serve(context.Background(), testprovider.New, providerserver.ServeOpts{Address: testprovider.Address})
	if err != nil {
		log.Fatal(err)
	}
}
