import { Global, Module } from '@nestjs/common';
import { LifecycleEvents } from './lifecycle-events';
import { RepositoryEvents } from './repository-events';
import { LifecycleSubscribers } from './subscribers';

/**
 * The event door every domain module reports to (global: reporting needs no import of the listener), and the bus
 * of lifecycle events with its one list of subscribers (subscribers.ts).
 */
@Global()
@Module({ providers: [LifecycleEvents, LifecycleSubscribers, RepositoryEvents], exports: [LifecycleEvents, RepositoryEvents] })
export class EventsModule {}
