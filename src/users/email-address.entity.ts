import { Entity, Index } from 'typeorm';
import { FlagColumn, IdColumn, RefColumn, TextColumn } from '../database/columns';

@Entity('email_address')
@Index('IDX_email_address_lower_email', ['lowerEmail'], { unique: true })
@Index('IDX_email_address_uid', ['uid'])
export class EmailAddressEntity {
  @IdColumn()
  id: number;

  @RefColumn()
  uid: number;

  @TextColumn(255)
  email: string;

  @TextColumn(255)
  lowerEmail: string;

  @FlagColumn(false)
  isActivated: boolean;

  @FlagColumn(false)
  isPrimary: boolean;
}
