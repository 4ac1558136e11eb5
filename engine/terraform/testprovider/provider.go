package testprovider

import (
	"context"
	"os"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// New returns the world provider, as providerserver.Serve wants it.
func New() provider.Provider { return &worldProvider{} }

type worldProvider struct{}

type providerModel struct {
	Dir types.String `tfsdk:"dir"`
}

// world is what the provider hands its resources: where the world is.
type world struct{ dir string }

func (p *worldProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "world"
	resp.Version = Version
}

func (p *worldProvider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "Things kept as files in a directory outside Terraform.",
		Attributes: map[string]schema.Attribute{
			"dir": schema.StringAttribute{
				Optional:    true,
				Description: "The world's directory; $" + DirEnv + " when unset.",
			},
		},
	}
}

func (p *worldProvider) Configure(ctx context.Context, req provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	var m providerModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	dir := m.Dir.ValueString()
	if dir == "" {
		dir = os.Getenv(DirEnv)
	}
	// An unknown or empty dir is reported by the resources that need it:
	// validating a config needs no world.
	resp.ResourceData = world{dir: dir}
	resp.DataSourceData = world{dir: dir}
}

func (p *worldProvider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{newThing}
}

func (p *worldProvider) DataSources(context.Context) []func() datasource.DataSource {
	return []func() datasource.DataSource{newGate, newExec}
}
