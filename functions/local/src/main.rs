//! `cargo run -p local -- serve` serves the whole API on 127.0.0.1:3000 on the embedded store;
//! the other subcommands are the operator CLI (`--help`).

use clap::Parser;
use local::cli::{Cli, CliResult, Command, run_operator};
use workapi_kit::AppState;
use workapi_kit::app::TokenKeySource;
use workapi_kit::oauth::issuer::SiteUrl;

/// On the servers' runtime (`workapi_kit::http::runtime`: the request deadline needs a second worker).
fn main() {
    workapi_kit::telemetry::init_local();
    let cli = Cli::parse();
    let result = match workapi_kit::http::runtime() {
        Ok(runtime) => runtime.block_on(run(cli)),
        Err(e) => Err(e.into()),
    };
    if let Err(e) = result {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

async fn run(cli: Cli) -> CliResult<()> {
    if let Command::Template { check, root } = &cli.command {
        return Ok(local::template::run(root, *check)?);
    }
    let backend = cli.store.open().await?;
    let Command::Serve { addr } = cli.command else {
        return run_operator(cli.command, &backend).await;
    };
    let store = backend.store();
    let key = backend.token_key().await?;
    if let Some(demo) = local::demo::ensure_demo(store.as_ref(), &key).await? {
        local::demo::seed_demo_agents(store.as_ref(), backend.secrets().as_ref(), demo.workspace_id).await?;
        eprintln!(
            "Created the demo workspace {} with admin {} ({})",
            demo.workspace_id,
            local::demo::DEMO_EMAIL,
            demo.user_id
        );
        eprintln!("Admin token (shown once; create more with `workapi token create`):\n\n    {}\n", demo.token);
        eprintln!("Admin login (POST /api/auth/login): {} / {}\n", local::demo::DEMO_EMAIL, local::demo::DEMO_PASSWORD);
    }
    let sessions = backend.session_keys().await?;
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let site_url = SiteUrl::local(listener.local_addr()?);
    let mut state = AppState::builder(store, TokenKeySource::Static(key))
        .session_keys(sessions)
        .objects(backend.objects())
        .secrets(backend.secrets())
        .site_url(site_url.clone());
    let sources = backend.dispatch_sources();
    if let Some((_, queue)) = &sources {
        state = state.queue(queue.clone());
    }
    let state = state.build();
    match sources {
        // The events' notifications and webhook deliveries, as Lambda makes them deployed.
        Some((feed, queue)) => {
            let dispatcher = std::sync::Arc::new(dispatch::Dispatcher::new(state.clone(), queue.clone())?);
            tokio::spawn(dispatcher.run_local(feed, queue));
        }
        None => eprintln!(
            "Events are not dispatched by this server on DynamoDB (deployed, Lambda reads the table's stream)"
        ),
    }
    let app = local::app(state);
    eprintln!("workapi listening on http://{} (site URL {})", listener.local_addr()?, site_url.of(&Default::default()));
    axum::serve(listener, app.into_make_service_with_connect_info::<std::net::SocketAddr>())
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
    Ok(())
}
