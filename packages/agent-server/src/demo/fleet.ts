import type { ToolDefinition } from '../agent/tool.ts'

export type Environment = 'staging' | 'production'

/**
 * A simulated fleet (docs/demo-agent.md): the version each environment runs, shared by every thread of the agent
 * (one per process by default, `PROCESS_FLEET`), in memory only. `deploy` changes it and observes it
 * (docs/approvals.md#stale-approvals): a deploy approved in one thread makes another thread's pending deploy to the
 * same environment stale.
 */
export interface Fleet {
  running(environment: Environment): string
  deploy(environment: Environment, version: string): void
}

export const FLEET_START: Readonly<Record<Environment, string>> = { staging: 'v2.0', production: 'v2.0' }

export function createFleet(start: Readonly<Record<Environment, string>> = FLEET_START): Fleet {
  const versions = new Map<Environment, string>(Object.entries(start) as [Environment, string][])
  return {
    running: (environment) => versions.get(environment) ?? 'none',
    deploy: (environment, version) => {
      versions.set(environment, version)
    },
  }
}

/**
 * The fleet of this process: one simulated world for every agent and server in it (docs/demo-agent.md). It is in
 * memory, so a new process starts from `FLEET_START`: after a restart a deploy approved before it may be asked again
 * as stale when the fleet had changed before the pause.
 */
export const PROCESS_FLEET: Fleet = createFleet()

type DeployArgs = { version: string; environment: Environment }

/**
 * The demo's `deploy` on a fleet: it observes the version the target environment runs (the approval is about
 * replacing that one) and, once it runs, deploys to the fleet besides recording the deployment in the thread.
 */
export function deployOnFleet<TState>(
  deploy: ToolDefinition<DeployArgs, TState>,
  fleet: Fleet,
): ToolDefinition<DeployArgs, TState> {
  return {
    ...deploy,
    observe: (args) => ({ environment: args.environment, running: fleet.running(args.environment) }),
    execute: (args, ctx) => {
      fleet.deploy(args.environment, args.version)
      return deploy.execute!(args, ctx)
    },
  }
}
