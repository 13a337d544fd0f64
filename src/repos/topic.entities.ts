import { Entity, Index } from 'typeorm';
import { CounterColumn, IdColumn, RefColumn, TextColumn, UnixTimeColumn } from '../database/columns';

/** A topic name and how many repositories carry it. */
@Entity('topic')
@Index('IDX_topic_name', ['name'], { unique: true })
@Index('IDX_topic_repo_count', ['repoCount'])
export class TopicEntity {
  @IdColumn()
  id: number;

  @TextColumn(50)
  name: string;

  @CounterColumn()
  repoCount: number;

  @UnixTimeColumn()
  createdUnix: number;

  @UnixTimeColumn()
  updatedUnix: number;
}

/** A topic on a repository. */
@Entity('repo_topic')
@Index('IDX_repo_topic_repo_id_topic_id', ['repoId', 'topicId'], { unique: true })
@Index('IDX_repo_topic_topic_id_repo_id', ['topicId', 'repoId'])
export class RepoTopicEntity {
  @IdColumn()
  id: number;

  @RefColumn()
  repoId: number;

  @RefColumn()
  topicId: number;
}
