import { Global, Module } from '@nestjs/common';
import { RepositoryEvents } from './repository-events';

/** The event door every domain module reports to (global: reporting needs no import of the listener). */
@Global()
@Module({ providers: [RepositoryEvents], exports: [RepositoryEvents] })
export class EventsModule {}
